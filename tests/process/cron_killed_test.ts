/**
 * @module
 * A cron job's run cut off by its process's death (SIGKILL) runs again: KV delivers the slot's
 * message again to the next process on the file, and the turn the dead run still holds is that
 * slot's own. Before, that delivery was skipped ("another run of it is still going"), marked done,
 * and the slot never ran; the next slot waited for the job's `timeout` (5 minutes).
 */
import assert from "node:assert/strict";
import { defineJobs } from "../../lib/kv/jobs/define.ts";
import { listenJobs } from "../../lib/kv/jobs/listen.ts";
import type { JobTry } from "../../lib/kv/jobs/try.ts";
import { diedInRun, JOBS_IMPORTS } from "../helpers/died_in_run.ts";
import { tempStore } from "../helpers/kv.ts";
import { within } from "../helpers/wait.ts";

Deno.test("a cron slot whose process died mid-run runs again in the next process on the file", async () => {
  await using store = await tempStore();
  const path = store.path;
  // The first process enqueues the slot as its Deno.cron would, and dies in the slot's run.
  const code = `${JOBS_IMPORTS}
    const kv = await Deno.openKv(Deno.env.get("KV"));
    const jobs = defineJobs({ nightly: { cron: "0 3 * * *", run: () => {
      console.log("running");
      return new Promise(() => {});
    } } });
    await listenJobs(kv, jobs).fireCron("nightly", Date.now());`;
  await diedInRun(path, code);

  const kv = await Deno.openKv(path);
  const closing = new AbortController();
  const ran: string[] = [];
  const jobs = defineJobs({ nightly: { cron: "0 3 * * *", run: () => void ran.push("ran") } });
  const app = listenJobs(kv, jobs, { closing: closing.signal });
  try {
    const tried = new Promise<JobTry>((resolve) => app.watch(resolve));
    // KV gives a dead process's message again once its delivery's deadline passed: about a minute
    // on (measured: 63 s).
    const again = await within(tried, 120_000, "the killed slot's run in the next process");
    assert.match(again.id, /^cron:nightly:/);
    assert.equal(again.digest, undefined);
    assert.deepEqual(ran, ["ran"]);
  } finally {
    closing.abort();
    await app.ended();
    kv.close();
  }
});
