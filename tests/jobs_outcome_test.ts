/**
 * @module
 * A try's outcome once committed is the try's for good (`lib/kv/jobs/try.ts`): a delivery again of
 * a failed try runs nothing (its retry or dead letter is on record), nor one that reads as the
 * outcome lands; a keyed job's key outlives its retries; and the dead letter KV's local store writes
 * of a run alive past its redeliveries goes with the run's outcome.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { deadJobs, defineJobs } from "../lib/data.ts";
import { listenJobs } from "../lib/kv/jobs/listen.ts";
import { captureLogs, watchJobs } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";
import { tempStore } from "./helpers/kv.ts";
import { within } from "./helpers/wait.ts";
import { begunSlowJob } from "./helpers/slow_job.ts";

const DAY = 24 * 60 * 60 * 1000;
const WEEK = 7 * DAY;

/**
 * A job `flaky` that always fails on `retries`, and `probe`, which does not; one at a time, so that
 * a delivery's try is over before the next delivery's begins.
 */
function flakyJobs(retries: number[]) {
  const runs: string[] = [];
  const jobs = defineJobs({
    flaky: {
      retries,
      run(_: undefined, { id }) {
        runs.push(id);
        throw new Error("the provider said 503");
      },
    },
    probe: { run() {} },
  }, { concurrency: 1 });
  return { jobs, runs };
}

for (const [outcome, retries] of [["its retry", [60_000]], ["its dead letter", []]] as const) {
  Deno.test(`a failed try delivered again once ${outcome} was committed runs nothing`, async () => {
    await using kv = await Deno.openKv(":memory:");
    using logs = captureLogs();
    const { jobs, runs } = flakyJobs([...retries]);
    const app = memoryApp({ routes: {}, jobs }, { kv });
    using watched = watchJobs(app, jobs);
    try {
      await jobs.enqueue(kv, "flaky", undefined, { key: "k-1" });
      assert.ok((await watched.next("flaky")).digest);
      // What KV sends when the process died after the outcome's commit, before the queue heard the
      // try had ended: the same message again. Then a probe, delivered after it, in the one slot.
      await kv.enqueue({ job: "flaky", id: "k-1", payload: undefined, attempt: 0, keyed: true });
      await new Promise((resolve) => setTimeout(resolve, 5));
      await jobs.enqueue(kv, "probe", undefined);
      await watched.next("probe");
      // Before: the try ran again and enqueued a second retry (two chains from then on), or wrote
      // its dead letter again, with a second failure reported.
      assert.deepEqual(runs, ["k-1"]);
      assert.equal(logs.lines.filter((line) => line.level === "error").length, 1);
    } finally {
      await app.close();
    }
  });
}

/** How KV encodes a key of strings in its SQLite file (`kv.k`). */
function encodedKey(parts: string[]): Uint8Array {
  const bytes = parts.flatMap((part) => [2, ...new TextEncoder().encode(part), 0]);
  return new Uint8Array(bytes);
}

Deno.test("a keyed job's key is remembered a week past its retry's time, not a week past its enqueue", async () => {
  await using store = await tempStore();
  const path = store.path;
  const kv = await Deno.openKv(path);
  using _logs = captureLogs();
  const { jobs } = flakyJobs([10 * DAY]); // a retry 10 days on: past the key's week
  const app = memoryApp({ routes: {}, jobs }, { kv });
  using watched = watchJobs(app, jobs);
  let failedAt: number;
  try {
    await jobs.enqueue(kv, "flaky", undefined, { key: "k-1" });
    assert.ok((await watched.next("flaky")).digest);
    failedAt = Date.now();
  } finally {
    await app.close();
    kv.close();
  }
  const db = new DatabaseSync(path, { readOnly: true });
  const row = db.prepare("select expiration_ms from kv where k = ?")
    .get(encodedKey(["_jobs", "key", "flaky", "k-1"])) as { expiration_ms: number };
  db.close();
  // Before: it expired a week after the enqueue, three days before the retry, and the same key
  // could be enqueued again while the first still retried (two runs).
  const least = failedAt + WEEK + 10 * DAY - 60_000;
  assert.ok(row.expiration_ms >= least, `expires ${row.expiration_ms - failedAt} ms on`);
});

Deno.test("KV's own dead letter of a run that went on past its redeliveries goes with the run's outcome", async () => {
  await using kv = await Deno.openKv(":memory:");
  const { app, jobs, release } = await begunSlowJob(kv);
  using watched = watchJobs(app, jobs);
  try {
    // What KV's local store writes 7 minutes into a run alive: it counts each minute as a
    // failed delivery (its keepalive never extends the message's deadline) and, past the 5
    // redeliveries of its default backoff, keeps the message under `keysIfUndelivered`.
    const message = { job: "slow", id: "k-1", payload: undefined, attempt: 0, keyed: true };
    await kv.set(["_jobs", "dead", "slow", "k-1"], message);
    assert.equal((await deadJobs(kv)).length, 1);
    release();
    assert.equal((await watched.next("slow")).digest, undefined);
    // Before: the job ran to the end and was still listed dead, "undelivered", for a week.
    assert.deepEqual(await deadJobs(kv), []);
  } finally {
    release();
    await app.close();
  }
});

Deno.test("an outcome committed just after a delivery again read the job's marks: that delivery runs nothing", async () => {
  await using store = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const done = ["_jobs", "done", "once", "k-1"];
  const lease = ["_jobs", "try", "once", "k-1", 0];
  // Another process runs the try, its lease renewed; it ends as this delivery has read the marks.
  await store.set(lease, { until: Date.now() + 60_000, id: "k-1" });
  let ended = false;
  const kv = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property !== "get" && property !== "getMany") return value.bind(target);
      return async (keys: Deno.KvKey | Deno.KvKey[], ...rest: unknown[]) => {
        const read = await value.call(target, keys, ...rest);
        const all = property === "get" ? [keys as Deno.KvKey] : keys as Deno.KvKey[];
        if (!ended && all.some((key) => key[1] === "done")) {
          ended = true;
          await target.atomic().set(done, true).delete(lease).commit();
        }
        return read;
      };
    },
  });
  const runs: string[] = [];
  const jobs = defineJobs({ once: { run: (_: undefined, { id }) => void runs.push(id) } });
  const closing = new AbortController();
  const app = listenJobs(kv, jobs, { closing: closing.signal });
  try {
    await store.enqueue({ job: "once", id: "k-1", payload: undefined, attempt: 0, keyed: true });
    const settled = async () => {
      for (let tick = 0; tick < 300 && runs.length === 0; tick++) {
        if (logs.lines.some((line) => /the run it waited on has ended/.test(line.msg))) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await within(settled(), 20_000, "the delivery again");
    // Before: the marks and the lease were two reads; the lease, given back between them with the
    // outcome, read as a try never run, and it ran again.
    assert.deepEqual(runs, []);
  } finally {
    closing.abort();
    await app.ended();
  }
});
