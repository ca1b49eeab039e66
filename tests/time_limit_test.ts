/**
 * @module
 * `timeLimit` (lib/server/time_limit.ts): its signal aborts as `AbortSignal.timeout`'s does, unless
 * the work ended first, and its timer never holds a process, even with a listener kept on it for
 * good (which holds `AbortSignal.timeout`'s until it fires: tests/process/time_limit_test.ts, a
 * process of its own). Where a stopping `deno serve` relies on it: tests/process/serve_stop_test.ts.
 */
import assert from "node:assert/strict";
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
