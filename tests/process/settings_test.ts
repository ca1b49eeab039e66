/**
 * @module
 * Settings from the environment (`lib/cli/settings.ts`, `lib/sentry/config.ts`): what each
 * variable becomes, and that a value that makes no sense stops both entry points —
 * `lib/cli/start.ts` (`deno task start`) and `deno serve main.ts` — with a non-zero exit and a
 * message naming every variable that is wrong, before anything listens.
 */
import assert from "node:assert/strict";
import { readSettings, SettingsError } from "../../lib/cli/settings.ts";
import { PROJECT_ROOT } from "../helpers/project_copy.ts";
import { freePort } from "../helpers/server.ts";

const read = (env: Record<string, string>) => readSettings((name) => env[name]);

/** Each validated variable with a value that makes no sense. (`HOSTNAME` has no such value: an
 * empty one means the default.) */
const NONSENSE: Record<string, string> = {
  PORT: "99999",
  REQUEST_TIMEOUT_MS: "soon",
  EVENT_STREAM_LIFETIME_MS: "5m",
  EVENT_STREAMS_MAX: "0",
  ACTION_BODY_LIMIT: "1MB",
  REQUEST_BODY_BUDGET: "-5",
  LOG_REQUESTS: "maybe",
  APP_ORIGIN: "not-a-url",
  ALLOWED_HOSTS: "a b",
  TRUST_PROXY: "sometimes",
  SERVE_SOURCE_MAPS: "never",
  COMPRESS: "brotli",
  SENTRY_DSN: "not a dsn",
  SENTRY_SPOTLIGHT: "perhaps",
  SENTRY_TUNNEL: "maybe",
  SENTRY_TRACES_SAMPLE_RATE: "2",
  SENTRY_TRACES_PARENT_LIMIT: "lots",
  ASSET_RETENTION_DAYS: "a week",
  ASSET_RETENTION_BYTES: "64MiB",
};

Deno.test("defaults, with nothing set", () => {
  const settings = read({});
  assert.equal(settings.port, 8000);
  assert.equal(settings.hostname, "0.0.0.0");
  assert.equal(settings.dev, false);
  assert.equal(settings.sentry, undefined);
  const { assetRetention, ...rest } = settings.app;
  assert.deepEqual(Object.values(rest).filter((v) => v !== undefined), [false]);
  // Earlier builds' assets: a week, 64 MiB.
  assert.deepEqual(assetRetention, { days: 7, maxBytes: 64 * 1024 * 1024 });
});

Deno.test("each variable becomes its option", () => {
  const settings = read({
    NODE_ENV: "development",
    PORT: "0",
    HOSTNAME: "127.0.0.1",
    REQUEST_TIMEOUT_MS: "0",
    EVENT_STREAM_LIFETIME_MS: "60000",
    EVENT_STREAMS_MAX: "500",
    ACTION_BODY_LIMIT: "4096",
    REQUEST_BODY_BUDGET: "8192",
    LOG_REQUESTS: "1",
    APP_ORIGIN: "https://example.com, http://localhost:8000",
    ALLOWED_HOSTS: "example.com,Example.org:8443",
    TRUST_PROXY: "yes",
    SERVE_SOURCE_MAPS: "0",
    COMPRESS: "off",
    ASSET_RETENTION_DAYS: "0",
    ASSET_RETENTION_BYTES: "2097152",
  });
  assert.equal(settings.port, 0);
  assert.equal(settings.hostname, "127.0.0.1");
  assert.equal(settings.dev, true);
  assert.deepEqual(settings.app, {
    dev: true,
    requestTimeoutMs: 0,
    eventStreamLifetimeMs: 60000,
    maxEventStreams: 500,
    actionBodyLimit: 4096,
    bodyBudget: 8192,
    logRequests: true,
    origins: ["https://example.com", "http://localhost:8000"],
    allowedHosts: ["example.com", "Example.org:8443"],
    trustProxy: true,
    serveSourceMaps: false,
    compress: false,
    assetRetention: { days: 0, maxBytes: 2097152 },
  });
  assert.equal(read({ LOG_REQUESTS: "off", TRUST_PROXY: "0" }).app.logRequests, false);
});

Deno.test("every value that makes no sense is named, all at once", () => {
  assert.throws(() => read(NONSENSE), (error) => {
    assert.ok(error instanceof SettingsError);
    const named = error.problems.map((problem) => problem.split(/[=:]/)[0]);
    assert.deepEqual(named.sort(), Object.keys(NONSENSE).sort());
    for (const [name, value] of Object.entries(NONSENSE)) {
      assert.ok(
        error.message.includes(`${name}=${value}: expected`),
        `${name} in ${error.message}`,
      );
    }
    return true;
  });
  assert.throws(
    () => read({ ACTION_BODY_LIMIT: "4096", REQUEST_BODY_BUDGET: "1024" }),
    /REQUEST_BODY_BUDGET: must be at least ACTION_BODY_LIMIT/,
  );
  for (const origin of ["https://example.com/path", "ftp://example.com", "example.com"]) {
    assert.throws(() => read({ APP_ORIGIN: origin }), /APP_ORIGIN=/, origin);
  }
});

/** Runs an entry point with the nonsense settings: its exit code and all it printed. */
async function runWithNonsense(args: string[]) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: PROJECT_ROOT,
    env: { NODE_ENV: "production", HOSTNAME: "127.0.0.1", ...NONSENSE },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code, output: text(stdout) + text(stderr) };
}

function assertRefused({ code, output }: { code: number; output: string }) {
  assert.notEqual(code, 0, output);
  assert.match(output, /Invalid settings:/);
  for (const [name, value] of Object.entries(NONSENSE)) {
    assert.ok(output.includes(`${name}=${value}: expected`), `${name} named in:\n${output}`);
  }
  assert.doesNotMatch(output, /Listening/, "stopped before listening");
}

Deno.test("lib/cli/start.ts stops on nonsense settings, naming each", async () => {
  assertRefused(await runWithNonsense(["run", "-A", "lib/cli/start.ts"]));
});

Deno.test("deno serve main.ts stops on nonsense settings, naming each", async () => {
  const port = freePort();
  const result = await runWithNonsense(["serve", "-A", `--port=${port}`, "main.ts"]);
  assertRefused(result);
  // Nothing took the port.
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  listener.close();
});

Deno.test("PAGE_CACHE_* become the page cache's bounds; PAGE_CACHE=0 turns it off", () => {
  const bounds = read({ PAGE_CACHE_MEMORY_BYTES: "1024", PAGE_CACHE_TAG_CHECK_MS: "10" });
  assert.deepEqual(bounds.app.pageCache, {
    memoryEntries: undefined,
    memoryBytes: 1024,
    kvEntries: undefined,
    maxBodyBytes: undefined,
    tagCheckMs: 10,
  });
  assert.equal(read({ PAGE_CACHE: "0" }).app.pageCache, false);
  assert.throws(() => read({ PAGE_CACHE_MAX_BODY: "1000000" }), /PAGE_CACHE_MAX_BODY=1000000/);
});
