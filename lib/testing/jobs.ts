/**
 * @module
 * An app's background jobs in a test, in-process: each try as it ends (done, or failed with its
 * digest), to wait for the one a test is about - bounded, and as soon as it ends rather than on a
 * poll - a cron job's slot fired now, as `Deno.cron` fires it at its time, and a job's try run now,
 * as its delivery would run it when due (a delayed job). Test-only.
 */
import type { AppJobs } from "../kv/jobs/listen.ts";
import type { JobTry } from "../kv/jobs/try.ts";
import { scopeOfApp } from "../server/scope.ts";
import { Arrivals } from "./arrivals.ts";

export type { JobTry };

/**
 * The tries of an app's jobs that ended since `watchJobs`, until disposed.
 *
 * @example
 * ```ts
 * import { type JobWatch, watchJobs } from "shell/testing";
 * import { createApp } from "shell/server";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * await using kv = await Deno.openKv(":memory:");
 * const app = createApp(manifest, { root: Deno.cwd(), kv });
 * using jobs: JobWatch = watchJobs(app);
 * await jobs.fireCron("autoClose"); // its slot now, not at 03:00
 * const { digest } = await jobs.next("autoClose");
 * console.log(digest === undefined ? "done" : `failed: ${digest}`);
 * await app.close();
 * ```
 * @see docs/testing.md - Background jobs
 */
export interface JobWatch extends Disposable {
  /** Every try that ended, in order. */
  readonly tries: readonly JobTry[];
  /**
   * The next try of the job `job` that ended - one `next` has not returned yet, ended before the
   * call or after it - within `timeout` ms (5000 by default); rejects after, naming what ended,
   * at once for a name `routes/_jobs.ts` does not declare, and at once when the watch is disposed
   * first ("disposed").
   */
  next(job: string, options?: { timeout?: number }): Promise<JobTry>;
  /**
   * Enqueues the run of the cron job `job` for its latest slot at or before `at` (now by default),
   * as every process's `Deno.cron` does at the slot's time; false when that slot was enqueued
   * already. Its try then ends as any job's (`next`).
   */
  fireCron(job: string, at?: Date | number): Promise<boolean>;
}

/**
 * Watches the tries of the background jobs (`routes/_jobs.ts`) of `app` - what `createApp` returned
 * in this process, with a KV store - until disposed. Throws for any other app.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createApp } from "shell/server";
 * import { watchJobs } from "shell/testing";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * await using kv = await Deno.openKv(":memory:");
 * const app = createApp(manifest, { root: Deno.cwd(), kv });
 * using jobs = watchJobs(app);
 * // ... a request whose handler enqueues "sendReply" ...
 * const tried = await jobs.next("sendReply", { timeout: 2000 });
 * assert.equal(tried.digest, undefined, "it ran to the end");
 * await app.close();
 * ```
 * @see docs/testing.md - Background jobs
 */
export function watchJobs(app: object): JobWatch {
  const handle = jobsOf(app, "watchJobs watches");
  const tries: JobTry[] = [];
  const taken = new Set<JobTry>();
  const arrivals = new Arrivals();
  const stop = handle.watch((tried) => {
    tries.push(tried);
    arrivals.arrived();
  });
  return {
    tries,
    next(job, { timeout = 5000 } = {}) {
      // A name no job has (a typo, a job renamed) would wait out the timeout and blame the job.
      if (!handle.names.includes(job)) return Promise.reject(noSuchJob(handle, job));
      // Taken as it is found: two calls waiting for one job get a try each.
      const take = () => {
        const tried = tries.find((each) => each.job === job && !taken.has(each));
        if (tried) taken.add(tried);
        return tried;
      };
      return arrivals.until(take, timeout, () => {
        const seen = tries.map((each) => `${each.job} (attempt ${each.attempt})`).join(", ");
        return `No try of the job "${job}" ended within ${timeout} ms; ended: ${seen || "none"}`;
      });
    },
    fireCron(job, at = Date.now()) {
      return handle.fireCron(job, typeof at === "number" ? at : at.getTime());
    },
    [Symbol.dispose]() {
      stop();
      arrivals.end(new Error("watchJobs: the watch was disposed before the try ended"));
    },
  };
}

/**
 * Runs a try of the job `job` of `app` now, as KV's queue delivers it once due: a delayed job (a
 * reminder due tomorrow) without its wait. The app's own `run` from `routes/_jobs.ts`, with what a
 * delivered try gets - the app's settings (`settings(job)`), its `signal` and `timeout`, a slot of
 * its `concurrency`, its span - and a failure handled as any try's: its JSON line and digest, its
 * event, then a retry on its schedule (`jobRetries`) or its dead letter. The payload is checked and
 * copied as an enqueue and the queue would. Resolves with the try once all of it is written (a
 * failed one with its `digest`); `watchJobs` sees it too. With `key`, the try runs under it as the
 * message enqueued with that key would: marked done, so that the message, once due, does not run
 * again - and a key done already runs nothing (rejects). Enqueues nothing, and leaves the queue's
 * messages as they are.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createApp } from "shell/server";
 * import { runJob } from "shell/testing";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * await using kv = await Deno.openKv(":memory:");
 * const app = createApp(manifest, { root: Deno.cwd(), kv });
 * // ... a booking whose action enqueued "remind" for tomorrow, under the key `remind:${id}` ...
 * const tried = await runJob(app, "remind", { id: "b-42" }, { key: "remind:b-42" });
 * assert.equal(tried.digest, undefined, "it ran to the end");
 * await app.close();
 * ```
 * @see docs/testing.md - Background jobs
 */
export async function runJob(
  app: object,
  job: string,
  payload: unknown,
  { key }: { key?: string } = {},
): Promise<JobTry> {
  const handle = jobsOf(app, "runJob runs the jobs of");
  if (!handle.names.includes(job)) throw noSuchJob(handle, job);
  const id = key ?? crypto.randomUUID();
  let tried: JobTry | undefined;
  // Told before `runNow` settles; a retry of it, attempt 1, is another try.
  const stop = handle.watch((each) => {
    if (each.job === job && each.id === id && each.attempt === 0) tried ??= each;
  });
  try {
    await handle.runNow(job, payload, id, key !== undefined);
  } finally {
    stop();
  }
  if (!tried) {
    throw new Error(`The job "${job}" was done already under the key "${key}": it runs once`);
  }
  return tried;
}

/** The jobs of `app`, made by `createApp` in this process with jobs and a store; `what` says who asks. */
function jobsOf(app: object, what: string): AppJobs {
  const scope = scopeOfApp(app);
  if (!scope) throw new TypeError(`${what} an app made by createApp in this process`);
  if (!scope.jobs) {
    throw new TypeError(
      "This app runs no background jobs: it needs routes/_jobs.ts and a KV store (createApp's kv)",
    );
  }
  return scope.jobs;
}

function noSuchJob(handle: AppJobs, job: string): TypeError {
  return new TypeError(
    `No job named "${job}" in routes/_jobs.ts; its jobs: ${handle.names.join(", ")}`,
  );
}
