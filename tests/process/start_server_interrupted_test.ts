/**
 * @module
 * A test run interrupted while its server runs (Ctrl-C, or the runner killed outright): the
 * server's process group, which no signal to the runner reaches, ends with it, and its own KV
 * folder is removed. The runner is a real `deno test` of a file that starts a server and waits.
 */
import assert from "node:assert/strict";
import { builtFixture } from "../helpers/built_copy.ts";
import { groupMembers } from "../helpers/process_group.ts";
import { tempDir } from "../helpers/temp_dir.ts";
import { within } from "../helpers/wait.ts";

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;
const RUNNER = `import { startServer } from "${
  new URL("../../lib/testing.ts", import.meta.url).href
}";
Deno.test("holds a server", async () => {
  const kvPath = Deno.env.get("KV_PATH");
  const server = await startServer({
    root: Deno.env.get("ROOT"),
    parallel: 1,
    env: kvPath ? { KV_PATH: kvPath } : {},
  });
  console.log("GROUP", server.pid, server.kvPath);
  await new Promise((resolve) => setTimeout(resolve, 60_000));
  await server.stop();
});
`;

/** Polls until `pgid` has no live process, up to `ms`; its members left then. */
async function gone(pgid: number, ms: number): Promise<number[]> {
  const end = Date.now() + ms;
  let left = await groupMembers(pgid);
  while (left.length > 0 && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = await groupMembers(pgid);
  }
  return left;
}

for (const signal of ["SIGINT", "SIGKILL"] as const) {
  Deno.test(`the runner gets ${signal}: nothing of its server's group is left`, async () => {
    await using dir = await tempDir("interrupted-");
    await Deno.writeTextFile(`${dir.path}/runner_test.ts`, RUNNER);
    const runner = new Deno.Command(Deno.execPath(), {
      args: ["test", "-A", "--config", CONFIG, `${dir.path}/runner_test.ts`],
      env: {
        ROOT: await builtFixture(),
        NODE_ENV: "production",
        NO_COLOR: "1",
        // After SIGINT a store the test holds: the group must be ended, not fail on a lost store.
        ...(signal === "SIGINT" ? { KV_PATH: `${dir.path}/kv.sqlite3` } : {}),
      },
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const said = await within(groupLine(runner.stdout), 60_000, "the runner's server");
    const [, pgid, kvPath] = said.split(" ");
    try {
      assert.ok((await groupMembers(Number(pgid))).length > 0, "the server runs");
      runner.kill(signal);
      const { code } = await within(runner.status, 10_000, "the runner's exit");
      if (signal === "SIGINT") assert.equal(code, 130);
      assert.deepEqual(await gone(Number(pgid), 10_000), [], "the server's group is gone");
      if (signal === "SIGKILL") {
        // Its own store's folder, removed by the watchdog too.
        const folder = kvPath.slice(0, kvPath.lastIndexOf("/"));
        const end = Date.now() + 5_000;
        const exists = () => Deno.stat(folder).then(() => true, () => false);
        while (await exists() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
        assert.equal(await exists(), false, "its store's folder is removed");
      }
    } finally {
      try {
        Deno.kill(-Number(pgid), "SIGKILL");
      } catch { /* gone, as it should be */ }
    }
  });
}

/** The runner's `GROUP <pgid> <kvPath>` line; the rest of its stdout is read and dropped. */
async function groupLine(stdout: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  const reader = stdout.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the runner ended before its server listened:\n${text}`);
    text += decoder.decode(value, { stream: true });
    const line = text.split("\n").find((line) => line.startsWith("GROUP "));
    if (line) {
      reader.releaseLock();
      stdout.pipeTo(new WritableStream()).catch(() => {});
      return line.trim();
    }
  }
}
