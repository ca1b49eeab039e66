/**
 * @module
 * A try's lease lapses only when its run renews nothing for 15 s: its process died, or its run
 * blocked the event loop that long (`lib/kv/jobs/lease.ts`). In the second case a delivery again
 * elsewhere takes the try over while it still runs here, and the job runs twice. That is said, once,
 * as an error line naming the job - by the renewal that finds the lease taken, or by the try's end
 * if it came first. Before, the renewals stopped and the outcome was committed without a word.
 */
import assert from "node:assert/strict";
import { captureLogs, type LogLine, type Logs } from "../lib/testing.ts";
import { begunSlowJob } from "./helpers/slow_job.ts";
import { within } from "./helpers/wait.ts";

/** Resolves once `key` holds a value in `kv`: KV's own watch, no polling. */
async function written(kv: Deno.Kv, key: Deno.KvKey): Promise<unknown> {
  for await (const [entry] of kv.watch([key])) {
    if (entry.versionstamp !== null) return entry.value;
  }
}

const LOST = /^Job slow: its lease lapsed while its run went on, and another delivery took it over/;
const lostLines = (logs: Logs): LogLine[] => logs.lines.filter((line) => LOST.test(line.msg));

/** What a delivery again in another process writes once this run's lease lapsed. */
const takeOver = (kv: Deno.Kv) =>
  kv.set(["_jobs", "try", "slow", "k-1", 0], { until: Date.now() + 60_000, id: "k-1" });

Deno.test("a lease taken over while its run goes on is an error line naming the job, from the next renewal", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const { app, release } = await begunSlowJob(kv);
  try {
    await takeOver(kv);
    // The next renewal (every 5 s) finds the lease taken.
    for (let tick = 0; tick < 140 && lostLines(logs).length === 0; tick++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [line, ...more] = lostLines(logs);
    assert.equal(line?.level, "error");
    assert.equal(line?.job, "slow");
    assert.equal(line?.job_id, "k-1");
    assert.equal(line?.attempt, 0);
    release();
    await within(written(kv, ["_jobs", "done", "slow", "k-1"]), 5_000, "the done mark");
    assert.deepEqual(more, []);
    assert.equal(lostLines(logs).length, 1, "said once, not again by the try's end");
  } finally {
    release();
    await app.close();
  }
});

Deno.test("a lease taken over just before its run ends is said by the try's end", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const { app, release } = await begunSlowJob(kv);
  try {
    await takeOver(kv);
    release(); // before any renewal
    await within(written(kv, ["_jobs", "done", "slow", "k-1"]), 5_000, "the done mark");
    assert.equal(lostLines(logs).length, 1);
  } finally {
    await app.close();
  }
});
