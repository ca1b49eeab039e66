/**
 * @module
 * A delivery again of a try waits on the lease its run renews (`lib/kv/jobs/lease.ts`). Here the
 * process running the try dies (SIGKILL) after that delivery, in another process on the same KV
 * file, began waiting: the waiting one takes the try over once the lease lapsed, and the job runs
 * to its outcome exactly once more - nothing lost, no dead letter, no lease left behind.
 */
import assert from "node:assert/strict";
import { defineJobs } from "../../lib/kv/jobs/define.ts";
import { type AppJobs, listenJobs } from "../../lib/kv/jobs/listen.ts";
import type { JobTry } from "../../lib/kv/jobs/try.ts";
import { captureLogs } from "../../lib/testing/logs.ts";
import { diedInRun, JOBS_IMPORTS } from "../helpers/died_in_run.ts";
import { tempStore } from "../helpers/kv.ts";
import { within } from "../helpers/wait.ts";

/** Counts the job's runs in the store, whichever process ran it. */
const RAN = ["ran", "k-1"];

Deno.test("a delivery waiting on a run whose process then dies takes the try over, once", async () => {
  await using store = await tempStore();
  const path = store.path;
  const kv = await Deno.openKv(path);
  using logs = captureLogs();
  const closing = new AbortController();
  const jobs = defineJobs({
    long: {
      async run(_: { n: number }, { kv }) {
        await kv.atomic().sum(RAN, 1n).commit();
      },
    },
  });
  const tried = Promise.withResolvers<JobTry>();
  let app: AppJobs | undefined;
  // The first process enqueues the job and runs it, holding its lease, until it is killed.
  const code = `${JOBS_IMPORTS}
    const kv = await Deno.openKv(Deno.env.get("KV"));
    const jobs = defineJobs({ long: { async run() {
      await kv.atomic().sum(${JSON.stringify(RAN)}, 1n).commit();
      console.log("running");
      await new Promise(() => {});
    } } });
    listenJobs(kv, jobs);
    await jobs.enqueue(kv, "long", { n: 1 }, { key: "k-1" });`;
  try {
    await diedInRun(path, code, async () => {
      // Listening once the first process runs the job: its first delivery is that process's.
      app = listenJobs(kv, jobs, { closing: closing.signal });
      app.watch(tried.resolve);
      // The message again, as KV sends it about a minute into a run that goes on: it reaches
      // this process, which waits on the lease the first one renews.
      await kv.enqueue({ job: "long", id: "k-1", payload: { n: 1 }, attempt: 0, keyed: true });
      const waiting = async () => {
        for (let at = 0; at < 100; at++) {
          if (logs.lines.some((line) => /delivered again .* waiting/.test(line.msg))) return;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        throw new Error("no delivery again waited in this process");
      };
      await within(waiting(), 15_000, "the delivery again to wait");
    });
    // Killed now: its lease lapses 15 s after its last renewal, and the waiting delivery runs.
    const again = await within(tried.promise, 40_000, "the try taken over");
    assert.equal(again.id, "k-1");
    assert.equal(again.digest, undefined);
    assert.equal((await kv.get<Deno.KvU64>(RAN)).value?.value, 2n);
    assert.notEqual((await kv.get(["_jobs", "done", "long", "k-1"])).versionstamp, null);
    assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["_jobs", "dead"] })), []);
    assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["_jobs", "try"] })), []);
    const ended = logs.lines.filter((line) => /the run it waited on has ended/.test(line.msg));
    assert.deepEqual(ended, [], "the dead run's lease is taken over, not read as its outcome");
  } finally {
    closing.abort();
    await app?.ended();
    kv.close();
  }
});
