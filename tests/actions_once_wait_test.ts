/**
 * @module
 * A repeat waiting for its first's outcome (`claimSubmission`) looks again less and less often:
 * many repeats of a slow first cost a few KV reads each, not one every 50 ms.
 */
import assert from "node:assert/strict";
import { claimSubmission, type Submissions } from "../lib/actions/once.ts";

Deno.test("a waiting repeat looks soon, then less often: a few reads in a second", async () => {
  let reads = 0;
  const running: Submissions = {
    claim: () => Promise.resolve("running"),
    settle: () => Promise.resolve(true),
    read: () => {
      reads++;
      return Promise.resolve("running");
    },
  };
  // A deadline 2 s away: the repeat waits half of it, then is refused.
  await assert.rejects(
    claimSubmission(running, "id", { expiresAt: performance.now() + 2_000, ms: 2_000 }),
    (error: Error & { status?: number }) => error.status === 409,
  );
  // Before: a read every 50 ms, about 20 in that second.
  assert.ok(reads >= 1 && reads <= 6, `${reads} reads`);
});
