/**
 * @module
 * A product's own settings (`routes/_settings.ts`) over real starts, in a built copy of the test
 * app with a declaration of its own: every entry point - `lib/cli/launch.ts` (`deno task start`),
 * `lib/cli/start.ts` (the server it runs) and `deno serve main.ts` (Deno Deploy's way in) - stops
 * before listening with one message naming the framework's problems and the product's, a secret by
 * name only; with good values, a route reads them typed.
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import { freePort, startServer } from "../helpers/server.ts";

const SECRET = "sk_live_hunter2hunter2hunter2";

const FILES = {
  "routes/_settings.ts": `import * as v from "valibot";
import { defineSettings, secret } from "shell";

export default defineSettings({
  PAGE_SIZE: v.optional(v.pipe(v.string(), v.digits("expected a number of rows"), v.toNumber()), "20"),
  BETA: v.optional(v.pipe(v.picklist(["on", "off"], "expected on or off"), v.transform((on) => on === "on")), "off"),
  PAYMENTS_URL: v.pipe(v.string(), v.url("expected a URL")),
  PAYMENTS_KEY: secret(v.pipe(v.string(), v.regex(/^sk_test_/, "expected a test key, sk_test_..."))),
});
`,
  "routes/api/settings.ts": `import { defineRoute } from "shell";
import settings from "../_settings.ts";

export const handler = defineRoute("api/settings.ts").handlers({
  GET(_req, ctx) {
    const { PAGE_SIZE, BETA, PAYMENTS_URL } = settings(ctx);
    return Response.json({ PAGE_SIZE, BETA, PAYMENTS_URL, doubled: PAGE_SIZE * 2 });
  },
});
`,
};

/** The framework's problem and each of the product's; the secret's value is wrong too. */
const BAD = {
  REQUEST_TIMEOUT_MS: "soon",
  PAGE_SIZE: "lots",
  PAYMENTS_KEY: SECRET,
};
const NAMED = [
  "REQUEST_TIMEOUT_MS=soon: expected milliseconds",
  "PAGE_SIZE=lots: expected a number of rows",
  "PAYMENTS_URL: required, and not set",
  "PAYMENTS_KEY (a secret, its value not shown): expected a test key",
];

async function refusedStart(args: (port: number) => string[]) {
  const root = await builtCopy("product-settings", FILES);
  const port = freePort();
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: args(port),
    cwd: root,
    env: { NODE_ENV: "production", KV_PATH: ":memory:", HOSTNAME: "127.0.0.1", ...BAD },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const output = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  assert.equal(code, 1, output);
  assert.equal(output.split("Invalid settings:").length, 2, `one message:\n${output}`);
  const message = output.slice(output.indexOf("Invalid settings:"));
  const lines = message.split("\n").slice(1, NAMED.length + 1);
  NAMED.forEach((named, i) =>
    assert.ok(lines[i]?.trim().startsWith(named), `${named}:\n${output}`)
  );
  assert.ok(!output.includes("hunter2"), `the secret's value shown:\n${output}`);
  assert.doesNotMatch(output, /Listening/);
  // Nothing took the port.
  Deno.listen({ hostname: "127.0.0.1", port }).close();
}

Deno.test("deno task start's launcher stops with every problem, the framework's and the product's", async () => {
  await refusedStart(() => ["run", "-A", "lib/cli/launch.ts"]);
});

Deno.test("lib/cli/start.ts stops with every problem, the framework's and the product's", async () => {
  await refusedStart(() => ["run", "-A", "lib/cli/start.ts"]);
});

Deno.test("deno serve main.ts stops with every problem, the framework's and the product's", async () => {
  await refusedStart((port) => ["serve", "-A", `--port=${port}`, "main.ts"]);
});

Deno.test("a route reads the product's settings, typed, under deno serve and deno task start", async () => {
  const root = await builtCopy("product-settings", FILES);
  const env = {
    PAGE_SIZE: "7",
    BETA: "on",
    PAYMENTS_URL: "https://pay.example",
    PAYMENTS_KEY: "sk_test_x",
  };
  for (
    const args of [
      (port: number) => ["serve", "-A", `--port=${port}`, "main.ts"],
      undefined, // lib/cli/start.ts
    ]
  ) {
    await using server = await startServer(env, { root, args });
    const response = await server.fetch("/api/settings");
    assert.deepEqual(await response.json(), {
      PAGE_SIZE: 7,
      BETA: true,
      PAYMENTS_URL: "https://pay.example",
      doubled: 14,
    });
  }
});
