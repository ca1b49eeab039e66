/**
 * @module
 * `timeLimit` (lib/server/time_limit.ts): its signal aborts as `AbortSignal.timeout`'s does, unless
 * the work ended first, and its timer never holds a process, even with a listener kept on it for
 * good (which holds `AbortSignal.timeout`'s until it fires). Where a stopping `deno serve` relies
 * on it: tests/process/serve_stop_test.ts.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { timeLimit } from "../lib/server/time_limit.ts";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("a time limit aborts its signal with a TimeoutError when time is up", async () => {
  using limit = timeLimit(20);
  assert.equal(limit.signal.aborted, false);
  await pause(200);
  assert.equal(limit.signal.aborted, true);
  assert.ok(limit.signal.reason instanceof DOMException);
  assert.equal(limit.signal.reason.name, "TimeoutError");
});

Deno.test("a time limit cleared, or disposed of, never aborts", async () => {
  const cleared = timeLimit(20);
  cleared.clear();
  let disposed: AbortSignal;
  {
    using limit = timeLimit(20);
    disposed = limit.signal;
  }
  await pause(200);
  assert.equal(cleared.signal.aborted, false);
  assert.equal(disposed.aborted, false);
});

/** How long a process takes to end whose only work is `setup` (run with the module imported). */
async function processTakes(setup: string): Promise<number> {
  const module = fileURLToPath(new URL("../lib/server/time_limit.ts", import.meta.url));
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
