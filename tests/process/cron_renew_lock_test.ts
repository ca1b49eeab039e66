/**
 * @module
 * A cron job's turn (`lib/kv/jobs/lease.ts`) is renewed every 5 s while its run goes on. One
 * renewal refused by SQLite's write lock - another handle on the file writing: a `--parallel`
 * worker, another process on the same store - stopped the renewals for the rest of the run, so its
 * turn lapsed 15 s after the last one while it still ran, and the next slot (or KV's delivery again
 * a minute into the run) ran beside it. A refused beat is now one missed beat: the next renews.
 */
import assert from "node:assert/strict";
import { enqueueSlot } from "../../lib/kv/jobs/cron.ts";
import { defineJobs } from "../../lib/kv/jobs/define.ts";
import { memoryApp } from "../helpers/app.ts";
import { holdWriteLock, tempStore } from "../helpers/kv.ts";
import { within } from "../helpers/wait.ts";

/** The renewal period of `cronTurn` (`BEAT_MS`), and a little: the lock covers one beat. */
const LOCKED_MS = 5_500;

Deno.test("a cron job's turn is renewed again after another handle's write lock refused a beat", async () => {
  await using store = await tempStore();
  const path = store.path;
  await using kv = await Deno.openKv(path);
  const begun = Promise.withResolvers<void>();
  const finish = Promise.withResolvers<void>();
  const jobs = defineJobs({
    slow: {
      cron: "* * * * *",
      run() {
        begun.resolve();
        return finish.promise;
      },
    },
  });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  await app.ready;
  const turn = ["_jobs", "cron", "slow"];
  try {
    assert.equal(await enqueueSlot({ kv, jobs, name: "slow" }, Date.UTC(2026, 10, 28, 4)), true);
    await begun.promise;
    // Taken when the run began: the first beat comes 5 s later, while the lock is held.
    const lock = await holdWriteLock(path);
    try {
      await new Promise((resolve) => setTimeout(resolve, LOCKED_MS));
    } finally {
      await lock.release();
    }
    const { versionstamp } = await kv.get(turn);
    assert.ok(versionstamp, "the turn is held");
    const changes = kv.watch([turn]).getReader();
    try {
      const renewed = (async () => {
        for (;;) {
          const { value } = await changes.read();
          if (value?.[0].versionstamp !== versionstamp) return;
        }
      })();
      // Before: no beat after the refused one; the turn lapsed 15 s after the run began.
      await within(renewed, 8_000, "the next beat to renew the turn");
    } finally {
      await changes.cancel();
    }
  } finally {
    finish.resolve();
    await app.close();
  }
});
