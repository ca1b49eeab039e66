/**
 * @module
 * Enqueuing a job while another handle holds SQLite's write lock on the file, as a `deno serve
 * --parallel` worker keeping the build's assets does at start: the commit is refused at once with
 * "database is locked", and `jobs.enqueue` let that through as a 500 (`jobs_parallel_test.ts`
 * failed so in a CI run). It is tried again now, as every write of the shell is.
 */
import assert from "node:assert/strict";
import { defineJobs } from "../../lib/kv/jobs/define.ts";
import { holdWriteLock, tempStorePath } from "../helpers/kv.ts";

Deno.test("jobs.enqueue waits out another handle's write lock held for a moment", async () => {
  const path = await tempStorePath();
  await using kv = await Deno.openKv(path);
  await kv.set(["ready"], true); // the file and its tables exist before the lock is taken
  const jobs = defineJobs({ note: { run() {} } });
  const lock = await holdWriteLock(path);
  let keyed: Promise<boolean>;
  let plain: Promise<boolean>;
  try {
    keyed = jobs.enqueue(kv, "note", undefined, { key: "once" });
    plain = jobs.enqueue(kv, "note", undefined);
    // Held for longer than the first attempts last, well within the 2 s a locked write is tried.
    await new Promise((resolve) => setTimeout(resolve, 600));
  } finally {
    await lock.release();
  }
  assert.equal(await keyed, true);
  assert.equal(await plain, true);
  // A key taken is an answer at once, not a race to try again.
  assert.equal(await jobs.enqueue(kv, "note", undefined, { key: "once" }), false);
});
