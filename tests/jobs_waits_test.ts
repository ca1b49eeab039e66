/**
 * @module
 * A delivery again of a try whose run goes on elsewhere (`lib/kv/jobs/run.ts`) waits on that run's
 * lease outside the app's `concurrency` slots: it gives its slot back while it waits, and takes one
 * again only to run (the run it waited on lapsed). Before, each wait held a slot for as long as it
 * waited: ten of them (the default bound) and no other job of the process ran.
 */
import assert from "node:assert/strict";
import { defineJobs } from "../lib/data.ts";
import { captureLogs, type Logs } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";
import { within } from "./helpers/wait.ts";

/** Resolves once `key` holds a value in `kv`: KV's own watch, no polling. */
async function written(kv: Deno.Kv, key: Deno.KvKey): Promise<unknown> {
  for await (const [entry] of kv.watch([key])) {
    if (entry.versionstamp !== null) return entry.value;
  }
}

/** Resolves once `count` deliveries again logged their wait, 10 s at most. */
async function waits(logs: Logs, count: number): Promise<void> {
  const waiting = () => logs.lines.filter((line) => /delivered again .* waiting/.test(line.msg));
  for (let tick = 0; tick < 200 && waiting().length < count; tick++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(waiting().length, count, "the deliveries again that wait");
}

/** A try's lease as the process running it elsewhere holds it, until `until`. */
const lease = (id: string) => ["_jobs", "try", "long", id, 0];

/** KV's delivery again of a first try of `long`: what its listener gets about a minute in. */
const again = (id: string) => ({ job: "long", id, payload: undefined, attempt: 0, keyed: true });

Deno.test("deliveries waiting on their runs elsewhere hold no slot: other jobs still run meanwhile", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const ran: string[] = [];
  const jobs = defineJobs({
    long: { run: (_: undefined, { id }) => void ran.push(id) },
    quick: { run: async (_: undefined, { kv }) => void await kv.set(["quick"], true) },
  }); // 10 at once, the default
  const ids = Array.from({ length: 10 }, (_, n) => `k-${n}`);
  // Ten tries run by another process, each renewing its lease there.
  const until = Date.now() + 60_000;
  await ids.reduce((atomic, id) => atomic.set(lease(id), { until, id }), kv.atomic()).commit();
  const app = memoryApp({ routes: {}, jobs }, { kv });
  try {
    for (const id of ids) await kv.enqueue(again(id));
    await waits(logs, 10);
    await jobs.enqueue(kv, "quick", undefined);
    // Before: the ten waits held the ten slots, and this one waited for them (a minute here).
    await within(written(kv, ["quick"]), 5_000, "the other job, beside ten waits");
    // Those runs end, each giving its lease back with its outcome: the waits end, none run here.
    await ids.reduce((atomic, id) => atomic.delete(lease(id)), kv.atomic()).commit();
    const over = () => logs.lines.filter((line) => /the run it waited on has ended/.test(line.msg));
    for (let tick = 0; tick < 200 && over().length < 10; tick++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(over().length, 10);
    assert.deepEqual(ran, []);
  } finally {
    await app.close();
  }
});

Deno.test("a delivery that waited takes a slot again to run: the bound holds", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const ran: string[] = [];
  const gate = Promise.withResolvers<void>();
  const gated = Promise.withResolvers<void>();
  const jobs = defineJobs({
    long: { run: (_: undefined, { id }) => void ran.push(id) },
    busy: {
      async run() {
        gated.resolve();
        await gate.promise;
      },
    },
  }, { concurrency: 1 });
  // A run in a process that dies now: its lease lapses in a second.
  await kv.set(lease("k-1"), { until: Date.now() + 1_000, id: "k-1" });
  const app = memoryApp({ routes: {}, jobs }, { kv });
  try {
    await kv.enqueue(again("k-1"));
    await waits(logs, 1);
    // The waiting delivery gave its one slot back: another job takes it.
    await jobs.enqueue(kv, "busy", undefined);
    await within(gated.promise, 5_000, "the other job, in the slot the wait gave back");
    // The lease lapsed (past a second) and the delivery took the try over: it waits for the slot.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.deepEqual(ran, [], "no run beside the other job, past the bound of one");
    gate.resolve();
    await within(written(kv, ["_jobs", "done", "long", "k-1"]), 5_000, "the try taken over");
    assert.deepEqual(ran, ["k-1"]);
  } finally {
    gate.resolve();
    await app.close();
  }
});
