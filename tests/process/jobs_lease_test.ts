/**
 * @module
 * A job's try cut off by its process's death (SIGKILL) is taken over once its lease lapsed: the
 * delivery again of a try waits on the lease its run renews (`tests/jobs_test.ts`: one alive is
 * waited out), and a dead process renews nothing.
 */
import assert from "node:assert/strict";
import { defineJobs } from "../../lib/kv/jobs/define.ts";
import { listenJobs } from "../../lib/kv/jobs/listen.ts";
import type { JobTry } from "../../lib/kv/jobs/try.ts";
import { diedInRun, JOBS_IMPORTS } from "../helpers/died_in_run.ts";
import { tempStore } from "../helpers/kv.ts";
import { within } from "../helpers/wait.ts";

Deno.test("a try whose process died mid-run is taken over once its lease lapsed", async () => {
  await using store = await tempStore();
  const path = store.path;
  // The first process enqueues the job and dies in its run, its lease taken and never given back.
  const code = `${JOBS_IMPORTS}
    const kv = await Deno.openKv(Deno.env.get("KV"));
    const jobs = defineJobs({ long: { run: () => {
      console.log("running");
      return new Promise(() => {});
    } } });
    listenJobs(kv, jobs);
    await jobs.enqueue(kv, "long", { n: 1 }, { key: "k-1" });`;
  await diedInRun(path, code);

  const kv = await Deno.openKv(path);
  const closing = new AbortController();
  const ran: unknown[] = [];
  const jobs = defineJobs({ long: { run: (payload: { n: number }) => void ran.push(payload) } });
  const app = listenJobs(kv, jobs, { closing: closing.signal });
  try {
    assert.equal((await Array.fromAsync(kv.list({ prefix: ["_jobs", "try"] }))).length, 1);
    const tried = new Promise<JobTry>((resolve) => app.watch(resolve));
    // The message again, as KV sends a dead process's (about a minute on): it waits for the lease
    // to lapse (15 s after its last renewal), then runs.
    await kv.enqueue({ job: "long", id: "k-1", payload: { n: 1 }, attempt: 0, keyed: true });
    const again = await within(tried, 60_000, "the killed try's run in the next process");
    assert.equal(again.id, "k-1");
    assert.equal(again.digest, undefined);
    assert.deepEqual(ran, [{ n: 1 }]);
  } finally {
    closing.abort();
    await app.ended();
    kv.close();
  }
});
