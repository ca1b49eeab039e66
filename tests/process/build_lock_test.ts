/**
 * @module
 * A build kept waiting for the build lock (`lib/build/lock.ts`) - behind a hung build - says so,
 * with the holder's process id, and keeps waiting: it runs once the holder lets go.
 */
import assert from "node:assert/strict";
import { withBuildLock } from "../../lib/build/lock.ts";
import { tempDir } from "../helpers/temp_dir.ts";
import { within } from "../helpers/wait.ts";

const LOCK = new URL("../../lib/build/lock.ts", import.meta.url).href;

Deno.test("a build waiting for the lock says which process holds it, then runs", async () => {
  await using dir = await tempDir("build-lock-");
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  let holding!: () => void;
  const holds = new Promise<void>((resolve) => holding = resolve);
  const holder = withBuildLock(dir.path, () => (holding(), held));
  await holds;

  const waiter = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { withBuildLock } from "${LOCK}";
      await withBuildLock(Deno.args[0], async () => console.log("ran"));`,
      dir.path,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = new Response(waiter.stdout).text();
  const stderr = waiter.stderr.pipeThrough(new TextDecoderStream()).getReader();
  try {
    const said = await within(stderr.read(), 10_000, "the waiting build's line");
    assert.match(said.value ?? "", new RegExp(`process ${Deno.pid}\\b.*_build/build\\.lock`));
  } finally {
    release();
    await holder;
  }
  assert.equal((await waiter.status).code, 0);
  assert.equal((await stdout).trim(), "ran", "it kept waiting, and ran once the lock was let go");
  await stderr.cancel();
});
