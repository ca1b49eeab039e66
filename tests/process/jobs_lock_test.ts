/**
 * @module
 * Enqueuing a job while another handle holds SQLite's write lock on the file, as a `deno serve
 * --parallel` worker keeping the build's assets does at start: the commit is refused at once with
 * "database is locked", and `jobs.enqueue` let that through as a 500 (`jobs_parallel_test.ts`
 * failed so in a CI run). It is tried again now, as every write of the shell is - and so are the
 * commits of `retryDeadJob` and `dropDeadJob` (`deno task jobs`, a process beside the servers').
 */
import assert from "node:assert/strict";
import { deadLetter, dropDeadJob, retryDeadJob } from "../../lib/kv/jobs/dead.ts";
import { defineJobs } from "../../lib/kv/jobs/define.ts";
import { deadKey, triedKey } from "../../lib/kv/jobs/message.ts";
import { holdWriteLock, tempStore } from "../helpers/kv.ts";

Deno.test("jobs.enqueue waits out another handle's write lock held for a moment", async () => {
  await using store = await tempStore();
  const path = store.path;
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

Deno.test("retryDeadJob and dropDeadJob wait out another handle's write lock held for a moment", async () => {
  // Before: SQLite's "database is locked" came through as a bare TypeError, the job still dead -
  // and retryDeadJob, its marks going 100 a commit, commits up to fifteen times for one job.
  await using store = await tempStore();
  const path = store.path;
  await using kv = await Deno.openKv(path);
  for (const id of ["n-1", "n-2"]) {
    await kv.set(
      deadKey("note", id),
      deadLetter({ job: "note", id, payload: {}, attempt: 0 }, "d"),
    );
  }
  const atomic = kv.atomic();
  for (let attempt = 0; attempt < 250; attempt++) {
    atomic.set(triedKey("note", "n-1", attempt), true);
  }
  await atomic.commit();
  const lock = await holdWriteLock(path);
  let retried: Promise<boolean>;
  let dropped: Promise<boolean>;
  try {
    retried = retryDeadJob(kv, "note", "n-1");
    dropped = dropDeadJob(kv, "note", "n-2");
    await new Promise((resolve) => setTimeout(resolve, 600));
  } finally {
    await lock.release();
  }
  assert.equal(await retried, true);
  assert.equal(await dropped, true);
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["_jobs"] })), []);
});
