/**
 * @module
 * Listening: every app made with a KV store runs its jobs as KV's queue delivers them to the
 * store's handle - one listener a handle, in a bounded number of slots - and enqueues its cron jobs
 * on their schedules, until it closes.
 */
import { log } from "../../server/log.ts";
import { describe } from "../../errors/digest.ts";
import { enqueueSlot, scheduleCrons } from "./cron.ts";
import { checkRetries, type Jobs, traceEnqueues } from "./define.ts";
import { deadKey, isJobMessage, type JobMessage, MAX_DELAY_MS } from "./message.ts";
import { fits, keptFaithfully } from "./payload.ts";
import { type ListenOptions, run, type Runner } from "./run.ts";
import { dueSlots, EARLY_MS, scheduleOf } from "./schedule.ts";
import { Slots } from "./slots.ts";
import type { JobTry } from "./try.ts";

/** An open app's jobs, as the listener of its store handle runs them. */
interface Listening extends Runner {
  /** Its deliveries under way, for `close()` to wait for. */
  running: Set<Promise<void>>;
  /** Who is told of each try that ended (the test kit's `watchJobs`). */
  watchers: Set<(tried: JobTry) => void>;
}

/** An app's jobs as it listens for them: what `listenJobs` returns. */
export interface AppJobs {
  /** Resolves once the jobs under way when the app closed have ended (2 s at most). */
  ended(): Promise<void>;
  /**
   * Calls `watcher` with each try of the app's jobs that ends - run by it, or by another app of
   * them open on its store handle - until the returned stop.
   */
  watch(watcher: (tried: JobTry) => void): () => void;
  /**
   * Enqueues the run of the cron job `name` for its latest slot at or before `at`, as every
   * process's `Deno.cron` does then; false when that slot was enqueued already.
   */
  fireCron(name: string, at: number): Promise<boolean>;
  /**
   * Runs a first try of the job `name` now, under `id` (`keyed`: the key it would be enqueued
   * with), as a delivery of its message does - in a slot, under its telemetry, told to the watchers
   * - with the payload checked and copied as an enqueue and KV's queue would: the test kit's
   * `runJob`. Enqueues nothing.
   */
  runNow(name: string, payload: unknown, id: string, keyed: boolean): Promise<void>;
  /** The names of the jobs `routes/_jobs.ts` declares, for a test's mistake to name them. */
  readonly names: readonly string[];
  /** The declaration itself, for the test kit to know a test gave the app's. */
  readonly declaration: Jobs;
}

/** How long an app's close waits for its jobs under way (an unfinished one is delivered again). */
const CLOSE_MS = 2000;

/**
 * Each store handle's open apps. KV's queue splits a handle's messages between its listeners
 * (measured: a second `listenQueue` of one handle gets every other message), and a listener ends
 * only with the handle: so one listener a handle, running the jobs of whichever open app declares
 * them - not a closed app's, nor half of them lost to another app sharing the handle.
 */
const listening = new WeakMap<Deno.Kv, Set<Listening>>();

/**
 * Runs the app's jobs as KV's queue delivers them to this store's handle, and enqueues the cron
 * jobs on their schedules, until `closing` aborts; returns the app's handle on them, whose
 * `ended()` resolves once the jobs under way then have ended (2 s at most), after which the store
 * may be closed.
 */
export function listenJobs(
  kv: Deno.Kv,
  jobs: Jobs,
  options: ListenOptions = {},
): AppJobs {
  const { closing } = options;
  if (options.retries) checkRetries(options.retries, "jobRetries");
  scheduleCrons(kv, jobs, closing);
  const telemetry = options.telemetry;
  if (telemetry?.jobContext) traceEnqueues(jobs, telemetry.jobContext.bind(telemetry));
  let apps = listening.get(kv);
  if (!apps) {
    const opened = new Set<Listening>();
    listening.set(kv, apps = opened);
    // Resolves as the store closes; rejects only for a store closed already, which is no reason
    // to end the process (an unhandled rejection would).
    kv.listenQueue((message) => deliver(kv, opened, message)).catch((error) => {
      listening.delete(kv);
      log("error", `Background jobs cannot run on this store: ${describe(error).message}`);
    });
  }
  const app: Listening = { ...options, jobs, running: new Set(), watchers: new Set() };
  apps.add(app);
  closing?.addEventListener("abort", () => apps.delete(app), { once: true });
  const names = Object.keys(jobs.definitions);
  return {
    names,
    declaration: jobs,
    async ended() {
      if (app.running.size === 0) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise((resolve) => timer = setTimeout(resolve, CLOSE_MS));
      await Promise.race([Promise.allSettled(app.running), bound]);
      clearTimeout(timer);
    },
    watch(watcher) {
      app.watchers.add(watcher);
      return () => app.watchers.delete(watcher);
    },
    async fireCron(name, at) {
      const cron = Object.hasOwn(jobs.definitions, name) ? jobs.definitions[name].cron : undefined;
      if (cron === undefined) {
        throw new TypeError(
          Object.hasOwn(jobs.definitions, name)
            ? `The job "${name}" has no cron: enqueue it (jobs.enqueue, jobs.add) to run it`
            : `No cron job named "${name}" in routes/_jobs.ts; its jobs: ${names.join(", ")}`,
        );
      }
      // Without the second a firing's clock may run early by: the latest slot at or before `at`.
      const [slot] = dueSlots(scheduleOf(name, cron), at - EARLY_MS);
      return await enqueueSlot({ kv, jobs, name }, slot);
    },
    runNow(name, payload, id, keyed) {
      const message: JobMessage = { job: name, id, payload, attempt: 0 };
      if (keyed) message.keyed = true;
      fits(name, id, message);
      keptFaithfully(name, payload);
      // What the queue would deliver: a copy, as KV's serializer makes one.
      message.payload = structuredClone(payload);
      return runInSlot(kv, app, message);
    },
  };
}

function deliver(kv: Deno.Kv, apps: Set<Listening>, message: unknown): Promise<void> {
  if (!isJobMessage(message)) {
    // Somebody's own kv.enqueue on the app's store: its listener is not the only one (docs).
    log("warn", "A queue message that is no job's reached the app's listener: dropped");
    return Promise.resolve();
  }
  // Delivered 30 days on, KV's longest delay, and not due yet: wait again, taking no slot.
  const early = message.due === undefined ? 0 : message.due - Date.now();
  if (early > 0) {
    const { job, id } = message;
    return kv.enqueue(message, {
      delay: Math.min(early, MAX_DELAY_MS),
      keysIfUndelivered: [deadKey(job, id)],
    }).then(() => {});
  }
  const app = [...apps].find((each) => Object.hasOwn(each.jobs.definitions, message.job)) ??
    apps.values().next().value;
  // Every app on this handle closed (a stop under way): KV delivers it again, here or elsewhere.
  if (!app) return Promise.reject(new Error(`Job ${message.job} arrived with no app open`));
  const running = runInSlot(kv, app, message);
  app.running.add(running);
  return running.finally(() => app.running.delete(running));
}

/**
 * Each declaration's slots, shared by every app of it in the process (one in production; a test's
 * several apps of one manifest): its `concurrency` bounds the process, not each app.
 */
const slotsOf = new WeakMap<Jobs, Slots>();

async function runInSlot(kv: Deno.Kv, app: Listening, message: JobMessage): Promise<void> {
  let slots = slotsOf.get(app.jobs);
  if (!slots) slotsOf.set(app.jobs, slots = new Slots(app.jobs.concurrency));
  // A rejection leaves the message to KV, delivered again (here or elsewhere), as when no app is
  // open.
  const slot = await slots.take(
    app.closing,
    () => new Error(`Job ${message.job} was waiting for a slot when its app closed`),
  );
  try {
    const tried = await run(kv, app, message, slot);
    if (tried) tell(kv, app, tried);
  } finally {
    slot.release();
  }
}

/**
 * Tells the watchers (`watchJobs`) of every app of these jobs open on this handle of a try that
 * ended: the handle's one listener runs it in the first of them, and a test watching another (a
 * second app of its manifest on its store) waited for a try that never came.
 */
function tell(kv: Deno.Kv, app: Listening, tried: JobTry): void {
  for (const each of new Set([app, ...listening.get(kv) ?? []])) {
    if (each.jobs !== app.jobs) continue;
    for (const watcher of each.watchers) watcher(tried);
  }
}
