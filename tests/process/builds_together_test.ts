/**
 * @module
 * Builds of one project at once (two `deno task build`s, a dev server and a build, CI runs sharing
 * a cache folder) all succeed and leave whole results. Sessions in processes of their own start
 * together behind a barrier, round after round. A vendor module's sessions
 * (`tests/helpers/cached_build_session.ts`, on an empty cache each round) each write their own
 * temporary folder, a rename that loses to another's identical result is fine, and no session
 * removes a temporary folder another one is still writing. The server's Sentry SDK
 * (`tests/helpers/server_sdk_session.ts`) is written file by file, never a folder another build
 * is writing removed. And whole `deno task build`s at once take turns (`lib/build/lock.ts`): each
 * exits 0 and the bundle their fingerprint records is the one on disk.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bundleIntact } from "../../lib/build/bundle_record.ts";
import { contentOf, FILES } from "../helpers/cached_build_session.ts";
import { copyProject } from "../helpers/project_copy.ts";
import { tempDir } from "../helpers/temp_dir.ts";

const helper = (name: string) => new URL(`../helpers/${name}`, import.meta.url).pathname;
const SESSIONS = 4;
const ROUNDS = 5;
/** Whole builds take seconds: fewer rounds (unlocked, about one in five failed). */
const BUILD_ROUNDS = 5;

interface Session {
  child: Deno.ChildProcess;
  stderr: Promise<string>;
}

/** A session of `script` started and loaded, waiting at the barrier. */
async function session(script: string, root: string): Promise<Session> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, root],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const { value } = await lines.read();
  if (value?.trim() !== "ready") assert.fail(`not ready: ${value} ${await stderr}`);
  lines.releaseLock();
  return { child, stderr };
}

/** `SESSIONS` sessions of `script` started at once; asserts that each exited 0. */
async function together(round: number, script: string, root: string): Promise<void> {
  const sessions = await Promise.all(
    Array.from({ length: SESSIONS }, () => session(script, root)),
  );
  await Promise.all(sessions.map(async ({ child }) => {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode("go\n"));
    await writer.close();
  }));
  const ends = await Promise.all(sessions.map(async ({ child, stderr }) => ({
    code: (await child.status).code,
    stderr: await stderr,
  })));
  for (const [i, { code, stderr }] of ends.entries()) {
    assert.equal(code, 0, `round ${round}, session ${i}: ${stderr}`);
  }
}

Deno.test("sessions building one vendor module at once all succeed and leave it whole", async () => {
  await using dir = await tempDir("vendor-together-");
  const root = dir.path;
  await Deno.writeTextFile(join(root, "src.txt"), "the sources");
  for (let round = 1; round <= ROUNDS; round++) {
    await Deno.remove(join(root, "cache"), { recursive: true }).catch(() => {});
    await together(round, helper("cached_build_session.ts"), root);
    const entries = await Array.fromAsync(Deno.readDir(join(root, "cache")), (e) => e.name);
    assert.equal(entries.length, 1, `round ${round}: one entry, no leftovers: ${entries}`);
    assert.match(entries[0], /^bundle-[0-9a-f]{16}$/);
    for (let i = 0; i < FILES; i++) {
      const file = join(root, "cache", entries[0], "outputs", `part${i % 10}`, `file${i}.js`);
      assert.equal(await Deno.readTextFile(file), contentOf(i), `round ${round}: ${file}`);
    }
  }
});

Deno.test("builds writing the server's Sentry SDK at once all succeed and leave it whole", async () => {
  await using copy = await copyProject();
  const sdk = join(copy.root, "_build/server-sdk");
  for (let round = 1; round <= ROUNDS; round++) {
    await together(round, helper("server_sdk_session.ts"), copy.root);
    const files = await Array.fromAsync(Deno.readDir(sdk), (e) => e.name);
    assert.deepEqual(files.sort(), ["sdk.js", "sdk_tracing.js"], `round ${round}`);
    for (const file of files) {
      const code = await Deno.readTextFile(join(sdk, file));
      assert.match(code, /^[^]{10000,}$/, `round ${round}: ${file} is whole`);
    }
  }
});

Deno.test("deno task builds at once all succeed and leave a whole build", async () => {
  await using copy = await copyProject();
  const build = () =>
    new Deno.Command(Deno.execPath(), {
      args: ["task", "build"],
      cwd: copy.root,
      env: { NODE_ENV: "production" },
      stdout: "piped",
      stderr: "piped",
    }).output();
  for (let round = 1; round <= BUILD_ROUNDS; round++) {
    const ends = await Promise.all([build(), build()]);
    for (const [i, { code, stderr }] of ends.entries()) {
      assert.equal(code, 0, `round ${round}, build ${i}: ${new TextDecoder().decode(stderr)}`);
    }
    const fingerprint = await Deno.readTextFile(join(copy.root, "_build/fingerprint"));
    const record = fingerprint.slice(fingerprint.indexOf("\n") + 1);
    assert.ok(bundleIntact(join(copy.root, "_build/server"), record), `round ${round}`);
  }
});
