/**
 * @module
 * An app's background jobs in a test, in-process: each try as it ends (done, or failed with its
 * digest), to wait for the one a test is about - bounded, and as soon as it ends rather than on a
 * poll - a cron job's slot fired now, as `Deno.cron` fires it at its time, and a job's try run now,
 * as its delivery would run it when due (a delayed job). Each takes the app's declaration
 * (`routes/_jobs.ts`'s default export) beside the app: a job's name and payload are then typed by
 * it - a renamed job or payload field is a `deno check` error in the test - and checked to be the
 * app's. Test-only.
 */
import type { AppJobs } from "../kv/jobs/listen.ts";
import type { JobTry } from "../kv/jobs/try.ts";
import type { AnyJobs, Jobs, PayloadOf } from "../kv/jobs/define.ts";
import { scopeOfApp } from "../server/scope.ts";
import { Arrivals } from "./arrivals.ts";

export type { JobTry };

/**
 * The tries of an app's jobs that ended since `watchJobs`, until disposed.
 *
 * @example
 * ```ts
 * import { defineJobs } from "shell/data";
 * import { type JobWatch, watchJobs } from "shell/testing";
 * import { createApp } from "shell/server";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * // routes/_jobs.ts's default export; the app's manifest has it as `manifest.jobs`.
 * const declared = defineJobs({ autoClose: { cron: "0 3 * * *", run() {} } });
 * await using kv = await Deno.openKv(":memory:");
 * const app = createApp({ ...manifest, jobs: declared }, { root: Deno.cwd(), kv });
 * using jobs: JobWatch<typeof declared.definitions> = watchJobs(app, declared);
 * await jobs.fireCron("autoClose"); // its slot now, not at 03:00
 * const { digest } = await jobs.next("autoClose");
 * console.log(digest === undefined ? "done" : `failed: ${digest}`);
 * await app.close();
 * ```
 * @see docs/testing.md - Background jobs
 */
export interface JobWatch<J extends AnyJobs = AnyJobs> extends Disposable {
  /** Every try that ended, in order. */
  readonly tries: readonly JobTry[];
  /**
   * The next try of the job `job` that ended - one `next` has not returned yet, ended before the
   * call or after it - within `timeout` ms (5000 by default); rejects after, naming what ended,
   * at once for a name `routes/_jobs.ts` does not declare, and at once when the watch is disposed
   * first ("disposed").
   */
  next<N extends keyof J & string>(
    job: N,
    options?: { timeout?: number },
  ): Promise<JobTry<PayloadOf<J[N]>>>;
  /**
   * Enqueues the run of the cron job `job` for its latest slot at or before `at` (now by default),
   * as every process's `Deno.cron` does at the slot's time; false when that slot was enqueued
   * already. Its try then ends as any job's (`next`).
   */
  fireCron(job: keyof J & string, at?: Date | number): Promise<boolean>;
}

/**
 * Watches the tries of the background jobs (`routes/_jobs.ts`) of `app` - what `createApp` returned
 * in this process, with a KV store - until disposed. Throws for any other app, and when `jobs` is
 * not its declaration.
 *
 * @param app The app, made by `createApp` in this process with a KV store.
 * @param jobs Its declaration, `routes/_jobs.ts`'s default export: `next` and `fireCron` then take
 * only its jobs' names, typed.
 * @returns The watch, to dispose of (`using`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineJobs } from "shell/data";
 * import { createApp } from "shell/server";
 * import { watchJobs } from "shell/testing";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * // routes/_jobs.ts: `export default defineJobs({ sendReply: ... })`; import it as `jobs`.
 * const declared = defineJobs({ sendReply: { run(_: { ticket: string }) {} } });
 * await using kv = await Deno.openKv(":memory:");
 * const app = createApp({ ...manifest, jobs: declared }, { root: Deno.cwd(), kv });
 * using jobs = watchJobs(app, declared);
 * // ... a request whose handler enqueues "sendReply" ...
 * const tried = await jobs.next("sendReply", { timeout: 2000 });
 * assert.equal(tried.digest, undefined, "it ran to the end");
 * await app.close();
 * ```
 * @see docs/testing.md - Background jobs
 */
export function watchJobs<J extends AnyJobs>(app: object, jobs: Jobs<J>): JobWatch<J> {
  const handle = jobsOf(app, jobs, "watchJobs watches");
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
      const ended = arrivals.until(take, timeout, () => {
        const seen = tries.map((each) => `${each.job} (attempt ${each.attempt})`).join(", ");
        return `No try of the job "${job}" ended within ${timeout} ms; ended: ${seen || "none"}`;
      });
      // The try of the job `job`: what was enqueued for it, which its declaration types.
      return ended as Promise<JobTry<PayloadOf<J[typeof job]>>>;
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
 * again - and a key that ran already (done, or failed and retrying) runs nothing (rejects).
 * Enqueues nothing, and leaves the queue's messages as they are.
 *
 * @param app The app, made by `createApp` in this process with a KV store.
 * @param jobs Its declaration, `routes/_jobs.ts`'s default export: the job's name and payload are
 * typed by it (a renamed field is a `deno check` error); another declaration is refused.
 * @param job The job's name.
 * @param payload What its `run` takes, as an enqueue would give it.
 * @param options `key`: the key it was enqueued with.
 * @returns The try, once all of it is written.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineJobs } from "shell/data";
 * import { createApp } from "shell/server";
 * import { runJob } from "shell/testing";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * // routes/_jobs.ts: `export default defineJobs({ remind: ... })`; import it as `jobs`.
 * const jobs = defineJobs({ remind: { run(_: { id: string }) {} } });
 * await using kv = await Deno.openKv(":memory:");
 * const app = createApp({ ...manifest, jobs }, { root: Deno.cwd(), kv });
 * // ... a booking whose action enqueued "remind" for tomorrow, under the key `remind:${id}` ...
 * const tried = await runJob(app, jobs, "remind", { id: "b-42" }, { key: "remind:b-42" });
 * assert.equal(tried.digest, undefined, "it ran to the end");
 * await app.close();
 * ```
 * @see docs/testing.md - Background jobs
 */
export async function runJob<J extends AnyJobs, N extends keyof J & string>(
  app: object,
  jobs: Jobs<J>,
  job: N,
  payload: PayloadOf<J[N]>,
  { key }: { key?: string } = {},
): Promise<JobTry<PayloadOf<J[N]>>> {
  const handle = jobsOf(app, jobs, "runJob runs the jobs of");
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
    throw new Error(
      `The job "${job}" already ran under the key "${key}" (done, or failed and retrying): ` +
        "a key runs once",
    );
  }
  return tried as JobTry<PayloadOf<J[N]>>;
}

/**
 * The jobs of `app`, made by `createApp` in this process with jobs and a store, when `declared` is
 * their declaration; `what` says who asks.
 */
function jobsOf(app: object, declared: Jobs, what: string): AppJobs {
  const scope = scopeOfApp(app);
  if (!scope) throw new TypeError(`${what} an app made by createApp in this process`);
  if (!scope.jobs) {
    throw new TypeError(
      "This app runs no background jobs: it needs routes/_jobs.ts and a KV store (createApp's kv)",
    );
  }
  if (scope.jobs.declaration !== declared) {
    throw new TypeError(
      `${
        what.split(" ")[0]
      }: the jobs given are not this app's; give its routes/_jobs.ts's default ` +
        "export (the manifest's jobs)",
    );
  }
  return scope.jobs;
}

function noSuchJob(handle: AppJobs, job: string): TypeError {
  return new TypeError(
    `No job named "${job}" in routes/_jobs.ts; its jobs: ${handle.names.join(", ")}`,
  );
}
