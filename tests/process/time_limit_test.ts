/**
 * @module
 * `timeLimit` (lib/server/time_limit.ts) never holds a process, even with a listener kept on its
 * signal for good, which holds `AbortSignal.timeout`'s timer until it fires. A process of its own,
 * so under tests/process/ (`deno task test:unit` runs with `--deny-run`).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

/** How long a process takes to end whose only work is `setup` (run with the module imported). */
async function processTakes(setup: string): Promise<number> {
  const module = fileURLToPath(new URL("../../lib/server/time_limit.ts", import.meta.url));
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", `import { timeLimit } from ${JSON.stringify(module)};\n${setup}`],
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  // Past the bound below it has failed: no need to wait out a minute's limit.
  const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const { code } = await child.status;
  clearTimeout(killer);
  assert.equal(code, 0, "the process ended by itself");
  return performance.now() - started;
}

Deno.test("a time limit listened to for good does not keep a process alive", async () => {
  // A listener never let go, as a `Request` made with the signal keeps one: `AbortSignal.timeout`'s
  // timer held this process for its whole minute. Half of it is room for a loaded machine.
  const ms = await processTakes(
    `timeLimit(60_000).signal.addEventListener("abort", () => console.log("aborted"));`,
  );
  assert.ok(ms < 30_000, `the process ended after ${Math.round(ms)} ms`);
});
