/**
 * @module
 * Background jobs on Deno KV's queue, the one Deno Deploy runs: `routes/_jobs.ts` declares them
 * (`defineJobs`), code that answers a request enqueues them - alone or in the same commit as its
 * own writes, once per job and `key` however often it is asked - and every app made with a KV store
 * listens (`listenJobs`, from `createApp`). A job that throws is a failure like a request's (a
 * digest, the JSON line naming the job, an error event) and is tried again on its `retries`
 * schedule; past the last try it is kept under `["_jobs", "dead", name, id]` (where KV itself
 * keeps a delivery that never reached `run`), and `deadJobs` reads it. A job
 * with a `cron` schedule is enqueued by `Deno.cron` in every process once per slot and runs once:
 * its key is the slot, and a slot due while the run before goes on is skipped. Delivery is at
 * least once (a process may die between the work and its mark): a job done is marked and never
 * run again, a try under way holds a lease that a delivery of it again waits on, and work that
 * must not happen twice commits with a check of its own.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Cron } from "croner";
import { log, loggedHeader } from "../server/log.ts";
import { NO_LINKS, type Telemetry } from "../server/telemetry.ts";
import { describe, digestOf } from "../errors/digest.ts";
import { commit, retrying } from "./commit.ts";
import { assertFits, KvLimitError } from "./limits.ts";
import { type ProductSettings, withJobSettings } from "../settings/declare.ts";

/** The tries after the first, in milliseconds from the failure before: about 20 minutes in all. */
const RETRIES = [1_000, 10_000, 60_000, 300_000, 900_000];
/** How long a key refuses a second enqueue, and a done job a second run: a provider's retries. */
const REMEMBER_MS = 7 * 24 * 60 * 60 * 1000;
/** How long a try may take unless its job says (`timeout`). */
const TIMEOUT_MS = 5 * 60 * 1000;
/** The longest delay KV's queue takes (`kv.enqueue` refuses more): a retry's at most. */
const MAX_DELAY_MS = 30 * 24 * 60 * 60 * 1000;
/**
 * The longest delay a job takes, in hops of `MAX_DELAY_MS`: 1,000 years, past any product's need
 * and well within the expiry KV takes for its key (year 262143), which refused a delay of 10^16 ms
 * only at the commit, with its own words.
 */
const MOST_DELAY_MS = 1_000 * 365.25 * 24 * 60 * 60 * 1000;
/** How many of an app's jobs run at once in a process unless `defineJobs` says (`concurrency`). */
const CONCURRENCY = 10;

/**
 * What the job does with its payload; throwing fails this try.
 *
 * @example
 * ```ts
 * import type { JobDefinition } from "shell/data";
 *
 * const sendEmail: JobDefinition<{ to: string }> = {
 *   async run({ to }) {
 *     await fetch("https://mail.example/send", { method: "POST", body: to });
 *   },
 * };
 * ```
 * @see docs/data.md - Background jobs
 */
export interface JobDefinition<P> {
  /** The work, outside any request; throwing fails this try. */
  run(payload: P, job: JobContext): Promise<void> | void;
  /** Milliseconds before each try after the first; `[]`: one try. */
  retries?: number[];
  /** A cron schedule (`"0 3 * * *"`, UTC) on which the job runs with an `undefined` payload. */
  cron?: string;
  /**
   * Milliseconds a try may take (5 minutes by default): past it, the try fails and `signal`
   * aborts. A job has no request's deadline, and a try alive holds its lease (a delivery of it
   * again leaves it to that run): a `fetch` that hung held its job for ever, unlogged.
   */
  timeout?: number;
}

/**
 * What a job's run knows besides its payload; the product's settings are
 * `settings(job)` (`routes/_settings.ts`), as a handler's are `settings(ctx)`.
 *
 * @example
 * ```ts
 * import type { JobContext } from "shell/data";
 *
 * async function sendReply(to: string, { kv, id, signal }: JobContext): Promise<void> {
 *   await fetch("https://mail.example/send", { method: "POST", body: to, signal });
 *   await kv.set(["replies", id], to);
 * }
 * ```
 * @see docs/data.md - Background jobs
 */
export interface JobContext {
  /** The app's KV store. */
  kv: Deno.Kv;
  /** The job's name in `defineJobs`. */
  name: string;
  /** Its id: the `key` it was enqueued with, else a random one. */
  id: string;
  /** Aborts when the try is past its `timeout`: pass it on (`fetch(url, { signal })`). */
  signal: AbortSignal;
}

/**
 * How a job is enqueued.
 *
 * @example
 * ```ts
 * import type { EnqueueOptions } from "shell/data";
 *
 * // A provider's delivery id: its retries of the webhook enqueue nothing more. In 5 minutes.
 * const once: EnqueueOptions = { key: "delivery-8f2c", delay: 5 * 60_000 };
 * ```
 * @see docs/data.md - Background jobs
 */
export interface EnqueueOptions {
  /**
   * Enqueued once per key and job (for a week): a webhook delivery's id, say. A key too long for
   * KV's keys (about 2 KB with the job's name) is refused with a `KvLimitError`.
   */
  key?: string;
  /**
   * Milliseconds before it runs: any time ahead (a reminder the day before an appointment months
   * away). KV's queue holds a message 30 days at most, so a later one waits in hops of 30 days and
   * runs once due. Negative, `NaN`, infinite or past 1,000 years is a `TypeError` naming the job:
   * a time already past is the caller's to decide (run it now with 0, or enqueue nothing).
   */
  delay?: number;
}

/**
 * Jobs by name, each with a payload of its own: what `defineJobs` takes.
 *
 * @example
 * ```ts
 * import type { AnyJobs } from "shell/data";
 *
 * const definitions = { ping: { run() {} } } satisfies AnyJobs;
 * ```
 * @see docs/data.md - Background jobs
 */
// deno-lint-ignore no-explicit-any -- each job's payload is its own
export type AnyJobs = Record<string, JobDefinition<any>>;
/**
 * The payload a job's `run` takes.
 *
 * @example
 * ```ts
 * import type { JobDefinition, PayloadOf } from "shell/data";
 *
 * type SendReply = JobDefinition<{ ticket: string }>;
 * const payload: PayloadOf<SendReply> = { ticket: "T-42" };
 * ```
 * @see docs/data.md - Background jobs
 */
export type PayloadOf<J> = J extends JobDefinition<infer P> ? P : never;

/**
 * `routes/_jobs.ts`'s default export: the product's jobs, and the typed ways to enqueue them.
 *
 * @example
 * ```ts
 * import { defineJobs } from "shell/data";
 *
 * export const jobs = defineJobs({
 *   sendEmail: { async run({ to }: { to: string }) { console.log("mail to", to); } },
 * });
 * const kv = await Deno.openKv(":memory:");
 * await jobs.enqueue(kv, "sendEmail", { to: "ada@example.com" }, { key: "reply-42" });
 * kv.close();
 * ```
 * @see docs/data.md - Background jobs
 */
export interface Jobs<J extends AnyJobs = AnyJobs> {
  /** The jobs as `defineJobs` got them. */
  readonly definitions: J;
  /** How many of them run at once in a process (`JobsOptions.concurrency`). */
  readonly concurrency: number;
  /**
   * Enqueues a job; resolves `false`, enqueuing nothing, when its `key` was enqueued before. A
   * commit refused by another handle's lock on the file is tried again, for up to 2 s.
   *
   * @throws {KvBusyError} When the file stayed locked by another handle.
   */
  enqueue<N extends keyof J & string>(
    kv: Deno.Kv,
    name: N,
    payload: PayloadOf<J[N]>,
    options?: EnqueueOptions,
  ): Promise<boolean>;
  /**
   * Adds the job to a commit of the product's own: enqueued if and only if the commit succeeds,
   * and the commit fails when the `key` was enqueued before.
   */
  add<N extends keyof J & string>(
    atomic: Deno.AtomicOperation,
    name: N,
    payload: PayloadOf<J[N]>,
    options?: EnqueueOptions,
  ): Deno.AtomicOperation;
}

/**
 * What `defineJobs` takes besides the jobs.
 *
 * @example
 * ```ts
 * import { defineJobs } from "shell/data";
 *
 * export default defineJobs({ ping: { run() {} } }, { concurrency: 4 });
 * ```
 * @see docs/data.md - Background jobs
 */
export interface JobsOptions {
  /**
   * How many of these jobs run at once in a process, 10 by default; the others wait, in the order
   * KV delivered them, and a try's `timeout` starts when it runs. KV's queue hands a process every
   * message that is due at once: after an outage, a backlog of hundreds ran together against one
   * provider, and in one process's memory. A try past its `timeout` gives its slot back: a `run`
   * that ignores its `signal` goes on beside the next, beyond the bound.
   */
  concurrency?: number;
}

/** A job as it travels through KV's queue. */
interface JobMessage {
  job: string;
  id: string;
  payload: unknown;
  /** Tries before this one (absent from the first build's messages). */
  attempt?: number;
  /** Whether `id` is the key it was enqueued with. */
  keyed?: true;
  /** The trace context of the code that enqueued it (`Telemetry.jobContext`). */
  trace?: Record<string, string>;
  /** When it is due (ms since the epoch), for a delay past KV's 30 days: it hops until then. */
  due?: number;
}

/**
 * Declares the product's jobs, in `routes/_jobs.ts` as its default export.
 *
 * @example
 * ```ts
 * // routes/_jobs.ts
 * import { defineJobs } from "shell/data";
 *
 * export default defineJobs({
 *   autoClose: { cron: "0 3 * * *", run: async (_payload: undefined, { kv }) => void kv } ,
 * }, { concurrency: 10 }); // at most 10 of them at once in a process (the default)
 * ```
 * @see docs/data.md - Background jobs
 */
export function defineJobs<J extends AnyJobs>(
  definitions: J,
  { concurrency = CONCURRENCY }: JobsOptions = {},
): Jobs<J> {
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) {
    throw new TypeError(`Jobs: a concurrency of ${concurrency} (a whole number, 1 or more)`);
  }
  for (const [name, { retries = [], timeout = TIMEOUT_MS, cron }] of Object.entries(definitions)) {
    checkRetries(retries, `Job "${name}"`);
    if (cron !== undefined) scheduleOf(name, cron);
    if (!(timeout > 0 && timeout <= MAX_DELAY_MS)) {
      throw new TypeError(
        `Job "${name}": a timeout of ${timeout} ms (more than 0, 30 days at most)`,
      );
    }
  }
  const add = (
    atomic: Deno.AtomicOperation,
    name: string,
    payload: unknown,
    { key, delay }: EnqueueOptions = {},
  ) => {
    if (!Object.hasOwn(definitions, name)) {
      throw new TypeError(`No job named "${name}" in routes/_jobs.ts`);
    }
    if (delay !== undefined && !(delay >= 0 && delay <= MOST_DELAY_MS)) {
      throw new TypeError(
        `Job "${name}": a delay of ${delay} ms (0 or more, 1,000 years at most; for a time ` +
          "already past, enqueue it with 0 or not at all)",
      );
    }
    const id = key ?? crypto.randomUUID();
    // `attempt` from the first: a retry's message is no larger than the one that fitted.
    const message: JobMessage = { job: name, id, payload, attempt: 0 };
    if (key !== undefined) message.keyed = true;
    const trace = traced.get(jobs)?.();
    if (trace) message.trace = trace;
    if (delay !== undefined && delay > MAX_DELAY_MS) message.due = Date.now() + delay;
    fits(name, id, message); // first: the walk below then reads 64 KiB of payload at most
    keptFaithfully(name, payload);
    if (key !== undefined) {
      // Remembered from when it is due, not from now: a reminder 40 days ahead whose key went after
      // a week could be enqueued again with it meanwhile, and run twice.
      const seen = keyKey(name, key);
      const expireIn = REMEMBER_MS + Math.ceil(delay ?? 0);
      atomic.check({ key: seen, versionstamp: null }).set(seen, true, { expireIn });
    }
    // KV's own retries and dead letter are for a delivery that never reached `run` (a process
    // that died): a failing `run` is tried again by `listenJobs`.
    return atomic.enqueue(message, {
      delay: message.due === undefined ? delay : MAX_DELAY_MS,
      keysIfUndelivered: [deadKey(name, id)],
    });
  };
  const jobs: Jobs<J> = {
    definitions,
    concurrency,
    add,
    // Another handle on the file (a `--parallel` worker keeping the build's assets, a racing
    // keyed enqueue) can refuse the commit at once with SQLite's lock: tried again, bounded, as
    // every write of the shell is - a key taken is an answer, not a race to retry.
    enqueue(kv, name, payload, options) {
      return retrying(`enqueueing job "${name}"`, async (commit) => {
        const result = await commit(add(kv.atomic(), name, payload, options));
        return result.ok || ("locked" in result ? undefined : false);
      });
    },
  };
  return jobs;
}

/**
 * Each declaration's way to read the enqueuing code's trace context, once an app listening for its
 * jobs has telemetry that traces them (`Telemetry.jobContext`); none, and enqueuing reads nothing.
 */
const traced = new WeakMap<Jobs, () => Record<string, string> | undefined>();

/**
 * A job that ran out of tries, as KV kept it.
 *
 * @example
 * ```ts
 * import { type DeadJob, deadJobs } from "shell/data";
 *
 * const kv = await Deno.openKv(":memory:");
 * const dead: DeadJob[] = await deadJobs(kv, "sendReply");
 * for (const { id, digest } of dead) console.log(id, digest ?? "undelivered");
 * kv.close();
 * ```
 * @see docs/data.md - Background jobs
 */
export interface DeadJob {
  /** The job's name. */
  job: string;
  /** Its id (its key, if it had one). */
  id: string;
  /** What it was enqueued with. */
  payload: unknown;
  /**
   * Its last failure's digest: the JSON line and the Sentry event that say why. Absent for one KV
   * could not deliver (a process that died running it).
   */
  digest?: string;
  /** When its last try failed (ms since the epoch), beside `digest`. */
  failedAt?: number;
}

/**
 * Which dead jobs `deadJobs` reads.
 *
 * @example
 * ```ts
 * import { deadJobs, type DeadJobsOptions } from "shell/data";
 *
 * const kv = await Deno.openKv(":memory:");
 * const first: DeadJobsOptions = { limit: 50 };
 * const page = await deadJobs(kv, undefined, first);
 * const next = await deadJobs(kv, undefined, { limit: 50, after: page.at(-1) });
 * console.log(page.length, next.length);
 * kv.close();
 * ```
 * @see docs/data.md - Background jobs
 */
export interface DeadJobsOptions {
  /** At most this many (1000 by default): each is up to 64 KiB, and they are kept for a week. */
  limit?: number;
  /** Those after this one (the last of the page before), in KV's order of name, then id. */
  after?: Pick<DeadJob, "job" | "id">;
}

/**
 * The jobs that ran out of tries (`name` narrows them), `limit` (1000) at most a call: look, fix,
 * enqueue again, delete; or page on with `after`, the last one read.
 *
 * @example
 * ```ts
 * import { deadJobs } from "shell/data";
 *
 * const kv = await Deno.openKv(":memory:");
 * let page = await deadJobs(kv, undefined, { limit: 100 });
 * while (page.length > 0) {
 *   for (const dead of page) console.log(dead.job, dead.id, dead.payload);
 *   page = await deadJobs(kv, undefined, { limit: 100, after: page.at(-1) });
 * }
 * kv.close();
 * ```
 * @see docs/data.md - Background jobs
 */
export async function deadJobs(
  kv: Deno.Kv,
  name?: string,
  { limit = 1000, after }: DeadJobsOptions = {},
): Promise<DeadJob[]> {
  if (name !== undefined && after !== undefined && after.job !== name) {
    // KV's own error for a start outside the prefix names neither.
    throw new TypeError(
      `deadJobs: after is a dead "${after.job}" job, but the list is of "${name}"`,
    );
  }
  const prefix = name === undefined ? ["_jobs", "dead"] : ["_jobs", "dead", name];
  // KV's `start` is inclusive: from `after` itself, which is then skipped.
  const selector = after ? { prefix, start: deadKey(after.job, after.id) } : { prefix };
  const found: DeadJob[] = [];
  const entries = kv.list<DeadLetter>(selector, { limit: after ? limit + 1 : limit });
  for await (const entry of entries) {
    // KV's own dead letter is the message, tries and all; ours adds the last failure.
    const { job, id, payload, digest, failedAt } = entry.value;
    if (after && job === after.job && id === after.id) continue;
    const dead = digest === undefined
      ? { job, id, payload }
      : { job, id, payload, digest, failedAt };
    if (found.push(dead) === limit) break;
  }
  return found;
}

/**
 * Runs a dead job again: its entry goes and its message is enqueued in the same commit, as its
 * first try, under the same id, with its key and the trace it was enqueued in (its lines, events
 * and span stay tied to the earlier ones). `false` when there is no such dead job (retried or
 * dropped already, or past its week). For ops once the cause is fixed (`deno task jobs retry NAME
 * ID`), or an admin's page.
 *
 * @example
 * ```ts
 * import { retryDeadJob } from "shell/data";
 *
 * const kv = await Deno.openKv(":memory:");
 * await retryDeadJob(kv, "sendReply", "m-1"); // false: nothing of that name and id is dead
 * ```
 * @see docs/data.md - Background jobs
 */
export async function retryDeadJob(kv: Deno.Kv, name: string, id: string): Promise<boolean> {
  const entry = await kv.get<DeadLetter>(deadKey(name, id));
  if (entry.value === null) return false;
  const { payload, keyed, trace } = entry.value;
  const message: JobMessage = { job: name, id, payload, attempt: 0 };
  if (keyed) message.keyed = keyed;
  if (trace) message.trace = trace;
  const { ok } = await kv.atomic().check(entry).delete(deadKey(name, id))
    .enqueue(message, { keysIfUndelivered: [deadKey(name, id)] }).commit();
  return ok;
}

/**
 * Drops a dead job for good (`deno task jobs drop NAME ID`): `false` when there is no such one.
 *
 * @example
 * ```ts
 * import { dropDeadJob } from "shell/data";
 *
 * const kv = await Deno.openKv(":memory:");
 * await dropDeadJob(kv, "sendReply", "m-1"); // false: nothing of that name and id is dead
 * ```
 * @see docs/data.md - Background jobs
 */
export async function dropDeadJob(kv: Deno.Kv, name: string, id: string): Promise<boolean> {
  const entry = await kv.get(deadKey(name, id));
  if (entry.value === null) return false;
  return (await kv.atomic().check(entry).delete(deadKey(name, id)).commit()).ok;
}

/** An open app's jobs, as the listener of its store handle runs them. */
interface Listening extends ListenOptions {
  jobs: Jobs;
  /** Its deliveries under way, for `close()` to wait for. */
  running: Set<Promise<void>>;
  /** Who is told of each try that ended (the test kit's `watchJobs`). */
  watchers: Set<(tried: JobTry) => void>;
}

/**
 * A try of a job that ended, as the app's listener ran it (the test kit's `watchJobs`).
 *
 * @example
 * ```ts
 * import type { JobTry } from "shell/testing";
 *
 * const failed = (tried: JobTry) => tried.digest !== undefined;
 * ```
 * @see docs/testing.md - Background jobs
 */
export interface JobTry<P = unknown> {
  /** The job's name. */
  job: string;
  /** Its id: its key, else a random one. */
  id: string;
  /** What it was enqueued with (typed by the job's `run` where the test kit knows the job). */
  payload: P;
  /** Tries before this one. */
  attempt: number;
  /** The failure's digest, if this try failed (tried again, or kept as dead). */
  digest?: string;
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

/** What the app running the jobs gives them. */
export interface ListenOptions {
  /** Where failures are reported. */
  telemetry?: Telemetry;
  /**
   * Aborts as the app closes: its cron schedules end, and a delivery still waiting for a slot is
   * given back to KV.
   */
  closing?: AbortSignal;
  /** The app's own settings, which its jobs read as `settings(job)`. */
  settings?: ProductSettings;
  /** Every job's retries in place of its own (`AppOptions.jobRetries`: a test's). */
  retries?: number[];
}

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
  const scheduled = Object.entries(jobs.definitions).flatMap(([name, { cron }]) =>
    cron ? [[name, cron] as const] : []
  );
  // Refused before any is registered: a schedule that lost ran silently on the other's.
  for (const [name, cron] of scheduled) {
    const other = crons.get(cronName(name))?.schedule;
    if (other !== undefined && other !== cron) {
      throw new TypeError(
        `Job "${name}": cron "${cron}", but an app open in this process runs it on "${other}" ` +
          "(Deno.cron takes a name once: one schedule a job name in a process)",
      );
    }
  }
  for (const [name, cron] of scheduled) scheduleJob({ kv, jobs, name }, cron, closing);
  const telemetry = options.telemetry;
  if (telemetry?.jobContext) traced.set(jobs, telemetry.jobContext.bind(telemetry));
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
  // A rejection leaves the message to KV, delivered again (here or elsewhere), as when no app is open.
  const release = await slots.take(
    app.closing,
    () => new Error(`Job ${message.job} was waiting for a slot when its app closed`),
  );
  try {
    await run(kv, app, message);
  } finally {
    release();
  }
}

/** At most `size` holders at once; the others wait, first come first served. */
class Slots {
  #free: number;
  /** Who waits, in order: a Set, so that one whose app closed leaves from anywhere in it. */
  readonly #waiting = new Set<() => void>();

  constructor(size: number) {
    this.#free = size;
  }

  /** Resolves with the slot's release once one is free; rejects if `closing` aborts first. */
  async take(closing: AbortSignal | undefined, refused: () => Error): Promise<() => void> {
    if (closing?.aborted) throw refused();
    if (this.#free > 0) {
      this.#free--;
    } else {
      await new Promise<void>((resolve, reject) => {
        const granted = () => {
          closing?.removeEventListener("abort", abandon);
          resolve();
        };
        const abandon = () => {
          this.#waiting.delete(granted);
          reject(refused());
        };
        this.#waiting.add(granted);
        closing?.addEventListener("abort", abandon, { once: true });
      });
    }
    return () => this.#release();
  }

  /** Hands the slot to the first waiting, else frees it. */
  #release(): void {
    const next = this.#waiting.values().next();
    if (next.done) {
      this.#free++;
      return;
    }
    this.#waiting.delete(next.value);
    next.value();
  }
}

async function run(kv: Deno.Kv, app: Listening, message: JobMessage): Promise<void> {
  const { job: name, id, attempt = 0, keyed, trace } = message;
  const done = ["_jobs", "done", name, id];
  if ((await kv.get(done)).versionstamp !== null) return; // a delivery again, after it was done
  const definition = Object.hasOwn(app.jobs.definitions, name)
    ? app.jobs.definitions[name]
    : undefined;
  const slot = definition?.cron !== undefined && id.startsWith(`cron:${name}:`);
  // A cron job's lease is the job's (one slot runs at a time); any other's, its try's.
  const key = slot ? cronKey(name) : tryKey(name, id, attempt);
  const job = `${slot ? "Cron job" : "Job"} ${name}`;
  const logged = { job: name, job_id: loggedHeader(id), attempt };
  // KV sends a message again about a minute into a run that goes on (its local store).
  const waiting = () =>
    log("info", `${job}: delivered again while its run goes on, waiting`, logged);
  const turn = await leaseOf(kv, key, id, app.closing, waiting);
  if (turn === "ended") {
    // That run kept its lease and has ended, its outcome (done, or tried again) on record.
    log("info", `${job}: the run it waited on has ended, its outcome kept`, logged);
    return;
  }
  if (turn === "held") {
    // Whether the run holding the turn is the slot before (a job slower than its schedule) or one
    // of the slots a late firing caught up with it: no try, so no span; marked done, so a delivery
    // again never runs it - one run per slot at most, and the skip on record.
    log("warn", `Cron job ${name}: a slot was skipped, another run of it is still going`, {
      job: name,
      job_id: id,
    });
    await kv.set(done, true, { expireIn: REMEMBER_MS });
    return;
  }
  let tried: JobTry | undefined;
  try {
    const telemetry = app.telemetry;
    const once = async () => void (tried = await tryOnce(kv, app, message, definition, done, turn));
    if (!telemetry?.job) await once();
    else {
      const run = { name, attempt, key: keyed ? loggedHeader(id) : undefined, carried: trace };
      await telemetry.job(run, once);
    }
  } finally {
    await turn.end();
  }
  // Told once all of the try is written, the lease given back included: a test that fires the
  // next slot after `next` sees it run, not skipped.
  if (tried) tell(kv, app, tried);
}

/** A cron job's lease: one run of the job at a time, whichever slot. */
const cronKey = (name: string): Deno.KvKey => ["_jobs", "cron", name];
/** Any other job's: one run of each try (its id and attempt) at a time. */
function tryKey(name: string, id: string, attempt: number): Deno.KvKey {
  return ["_jobs", "try", name, id, attempt];
}

/**
 * How long a lease outlives its run's last renewal: a run renews it every `BEAT_MS`, so only a
 * run whose process died (or whose event loop a job blocked that long) lets it lapse.
 */
const LEASE_MS = 15_000;
const BEAT_MS = 5_000;

/** A lease in KV: which job id's run holds it, and until when unless renewed. */
interface LeaseRecord {
  until: number;
  id: string;
}

/** A lease taken: renewed while the run goes on, given back by `end`. */
interface Lease {
  /**
   * Gives the lease back (once; later calls do nothing), in the commit of the try's `outcome`
   * (its done mark, its retry or dead letter): one commit, not two. A lease taken over meanwhile
   * (a lapse) is left to its taker, and the outcome committed alone.
   */
  end(outcome?: (atomic: Deno.AtomicOperation) => Deno.AtomicOperation): Promise<void>;
}

/**
 * A run's lease, on any process. KV delivers a message again both once its process died mid-run
 * and, on its local store, about a minute into a run alive (its keepalive misses it; 62 s measured
 * on Deno 2.9.6): a job longer than that ran twice at once. The lease is held while the run goes
 * on, renewed every `BEAT_MS`, and lapses `LEASE_MS` after a process died: a delivery finding it
 * held by its own id waits as long as it is renewed, and takes it once nobody renewed it for
 * `LEASE_MS` (that run's process died), or answers `"ended"` once it was given back (that run's
 * outcome committed with it); `"held"` while another id's run holds it (a cron job's other slot:
 * `Deno.cron` skips a run while the one before goes on, and enqueuing each slot lost that).
 */
async function leaseOf(
  kv: Deno.Kv,
  key: Deno.KvKey,
  id: string,
  closing: AbortSignal | undefined,
  waiting: () => void,
): Promise<Lease | "held" | "ended"> {
  // Kept past its lease, so that a delivery waiting on it below still finds it unchanged.
  const take = (was: { key: Deno.KvKey; versionstamp: string | null }) => {
    const value: LeaseRecord = { until: Date.now() + LEASE_MS, id };
    return kv.atomic().check(was).set(key, value, { expireIn: 4 * LEASE_MS });
  };
  let held = await kv.get<LeaseRecord>(key);
  let taken: Deno.KvCommitResult | Deno.KvCommitError = { ok: false };
  let waited = false;
  while (!taken.ok) {
    if (held.value && held.value.until > Date.now()) {
      if (held.value.id !== id) return "held";
      // A run of this very message goes on: waited on, not let go - acknowledged now, nothing
      // would deliver it again should that run's process die before its outcome. Looked at
      // every beat; the app's close rejects the wait, leaving the message to KV.
      if (!waited) waiting();
      waited = true;
      const wait = Math.min(BEAT_MS, held.value.until - Date.now() + 1);
      await sleep(wait, undefined, { signal: closing });
      held = await kv.get<LeaseRecord>(key);
      if (held.versionstamp === null) return "ended"; // given back in the commit of its outcome
      continue; // renewed: wait on; not renewed by its end, taken below
    }
    taken = await take(held).commit();
    if (!taken.ok) held = await kv.get<LeaseRecord>(key);
  }
  let versionstamp = taken.versionstamp;
  let renewing = Promise.resolve();
  const beat = setInterval(() => {
    renewing = renewing.then(async () => {
      const renewed = await commit(take({ key, versionstamp })).catch(() => undefined);
      if (renewed?.ok) versionstamp = renewed.versionstamp;
      // Another handle's write lock on the file (a --parallel worker's, another process's) is one
      // beat missed, the next well within the lease; a lost check (taken over after a lapse) or
      // the store closed ends the renewals.
      else if (!renewed || !("locked" in renewed)) clearInterval(beat);
    });
  }, BEAT_MS);
  let ended = false;
  return {
    async end(outcome?: (atomic: Deno.AtomicOperation) => Deno.AtomicOperation) {
      if (ended) return;
      ended = true;
      clearInterval(beat);
      await renewing;
      const given = kv.atomic().check({ key, versionstamp }).delete(key);
      if ((await (outcome?.(given) ?? given).commit()).ok || !outcome) return;
      await outcome(kv.atomic()).commit(); // the taker keeps its lease; the outcome is this try's
    },
  };
}

/**
 * A try of the job: done, or failed (logged, reported) and enqueued again or kept as dead; returns
 * the try for the watchers.
 */
async function tryOnce(
  kv: Deno.Kv,
  app: Listening,
  message: JobMessage,
  definition: JobDefinition<unknown> | undefined,
  done: Deno.KvKey,
  lease: Lease,
): Promise<JobTry> {
  const { job: name, id, payload, attempt = 0 } = message;
  try {
    if (!definition) throw new Error(`No job named "${name}" in routes/_jobs.ts`);
    await withinTimeout(
      definition,
      (signal) => definition.run(payload, withJobSettings({ kv, name, id, signal }, app.settings)),
    );
  } catch (error) {
    // Tried again by us, not by KV's own retry (a rethrow): Deno prints every rethrown error
    // to stderr, and the dead letter KV writes past its retries wakes no `kv.watch`.
    const delay = (app.retries ?? definition?.retries ?? RETRIES)[attempt];
    const digest = failed(error, name, id, attempt, delay, app.telemetry);
    const next: JobMessage = { ...message, attempt: attempt + 1 };
    const dead = deadLetter(message, digest);
    await lease.end((atomic) =>
      delay === undefined
        ? atomic.set(deadKey(name, id), dead, { expireIn: REMEMBER_MS })
        : atomic.enqueue(next, { delay, keysIfUndelivered: [deadKey(name, id)] })
    );
    return { job: name, id, payload, attempt, digest };
  }
  await lease.end((atomic) => atomic.set(done, true, { expireIn: REMEMBER_MS }));
  return { job: name, id, payload, attempt };
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

/** Settles like the try, or fails once its `timeout` passed, aborting the signal it was given. */
async function withinTimeout(
  { timeout = TIMEOUT_MS }: JobDefinition<unknown>,
  work: (signal: AbortSignal) => Promise<void> | void,
): Promise<void> {
  const deadline = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`The job did not finish within ${timeout} ms (its timeout)`);
      error.name = "DeadlineExceeded";
      deadline.abort(error);
      reject(error);
    }, timeout);
  });
  try {
    await Promise.race([work(deadline.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Refuses a retry KV's queue would not take: found at start-up, rather than by `kv.enqueue` when a
 * job first fails.
 */
function checkRetries(retries: number[], whose: string): void {
  const bad = retries.find((ms) => !(ms >= 0 && ms <= MAX_DELAY_MS));
  if (bad !== undefined) {
    throw new TypeError(`${whose}: a retry of ${bad} ms (0 to 30 days, KV's queue's limit)`);
  }
}

/** What KV's serializer keeps as it was, besides plain objects and arrays (walked into). */
const KEPT = [
  Date,
  RegExp,
  Map,
  Set,
  ArrayBuffer,
  Blob,
  Error,
  Deno.KvU64,
  String,
  Number,
  Boolean,
];

/** What to pass instead of an object KV would store as `{}` (or without its class). */
const INSTEAD: Record<string, string> = {
  FormData: "Object.fromEntries(form), or the fields the job needs",
  URL: "url.href",
  URLSearchParams: "params.toString() or Object.fromEntries(params)",
  Headers: "Object.fromEntries(headers), or the headers the job needs",
};

/** A value the payload's walk has still to read, and the way to it (for the error only). */
interface Visit {
  value: object;
  parent?: Visit;
  /** From the parent: an array's index, an object's key, or how a Map or Set holds it. */
  step?: number | string;
}

/** Where a visit sits in the payload, as the error names it: `payload.items[2].link`. */
function pathOf(visit: Visit): string {
  const steps: string[] = [];
  for (let at: Visit | undefined = visit; at?.parent; at = at.parent) {
    steps.push(typeof at.step === "number" ? `[${at.step}]` : `${at.step}`);
  }
  return `payload${steps.reverse().join("")}`;
}

/**
 * Refuses a payload holding an object KV cannot keep faithfully - a `FormData`, `URL`, `Headers`,
 * a class's instance - which would reach `run` as `{}` or a bare object, its data or methods gone.
 * Plain objects, arrays, Maps and Sets are walked into (cycles once); dates, typed arrays and the
 * rest KV keeps are let through. The walk keeps its own stack: recursing, it overflowed the call
 * stack at about 1,800 levels, half the depth KV's serializer takes - a payload KV keeps, refused
 * with a `RangeError`.
 */
function keptFaithfully(name: string, payload: unknown): void {
  if (typeof payload !== "object" || payload === null) return;
  const seen = new Set<object>();
  const stack: Visit[] = [{ value: payload }];
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    const { value } = visit;
    if (seen.has(value)) continue;
    seen.add(value);
    const parent = visit;
    const push = (item: unknown, step: number | string) => {
      if (typeof item === "object" && item !== null) stack.push({ value: item, parent, step });
    };
    if (Array.isArray(value)) value.forEach(push);
    else if (value instanceof Map) {
      for (const [key, item] of value) push(key, " (a key)"), push(item, ".get()");
    } else if (value instanceof Set) {
      for (const item of value) push(item, " (an item)");
    } else if (!ArrayBuffer.isView(value) && !KEPT.some((kept) => value instanceof kept)) {
      const prototype = Object.getPrototypeOf(value);
      if (prototype === Object.prototype || prototype === null) {
        for (const [key, item] of Object.entries(value)) push(item, `.${key}`);
        continue;
      }
      const type = prototype?.constructor?.name || "an object of a class";
      throw new TypeError(
        `Job "${name}": its payload holds a ${type} (at ${
          pathOf(visit)
        }), which the store keeps as a bare object, its data lost: pass ${
          INSTEAD[type] ?? "a plain object, an array, or a Date, Map, Set, string or number"
        } instead`,
      );
    }
  }
}

/** Refuses, with KV's limit named, a job whose keys or message KV would refuse at the commit. */
function fits(name: string, id: string, message: JobMessage): void {
  try {
    // The longest of its keys, and its largest value: the dead letter it may become (the message
    // less its tries, plus a failure's digest and time), which would otherwise be refused unlogged.
    assertFits(deadKey(name, id), deadLetter(message, "00000-00000"));
    assertFits(tryKey(name, id, 0)); // its try's lease: a number is 9 bytes, whichever
  } catch (error) {
    if (!(error instanceof KvLimitError)) throw error;
    throw new KvLimitError(`Job "${name}": ${error.message} (its key, or its payload)`);
  }
}

/**
 * A dead job as kept under `deadKey`: KV's own dead letter is the message, tries and all; ours is
 * the message less its tries, plus the last failure's digest and time.
 */
type DeadLetter = DeadJob & Pick<JobMessage, "keyed" | "trace">;

function deadLetter({ job, id, payload, keyed, trace }: JobMessage, digest: string): DeadLetter {
  const dead: DeadLetter = { job, id, payload, digest, failedAt: Date.now() };
  if (keyed) dead.keyed = keyed;
  if (trace) dead.trace = trace;
  return dead;
}

const keyKey = (name: string, key: string): Deno.KvKey => ["_jobs", "key", name, key];
const deadKey = (name: string, id: string): Deno.KvKey => ["_jobs", "dead", name, id];

/** A cron job of one app: its store, where each slot is enqueued. */
interface CronTarget {
  kv: Deno.Kv;
  jobs: Jobs;
  name: string;
}

/**
 * A cron job's schedule, read as Deno.cron reads it (five fields, UTC): refused where it is
 * written, in `defineJobs`, naming the job - not when an app starts, with Deno's bare message.
 * Deno.cron's parser (Cloudflare's saffron) numbers the days of the week 1 (Sunday) to 7
 * (Saturday), Quartz's way, takes a step from a number (`5/15`), and has no nicknames
 * (`@daily`), no `?`, no day of the week past 7 and no space around the fields; croner is told
 * so, or it read `1` as Monday, refused `5/15`, and took schedules Deno.cron then refused at
 * start-up.
 */
export function scheduleOf(name: string, cron: string): Cron {
  try {
    const weekdays = cron.split(/\s+/)[4] ?? "";
    if (/[@?]|^\s|\s$|(?:^|\s)\//.test(cron) || /(?<![#/\d])(?:[89]|\d{2,})/.test(weekdays)) {
      throw new Error("Deno.cron takes no @nickname, ?, day of the week past 7, or outer space");
    }
    return new Cron(cron, {
      paused: true,
      timezone: "UTC",
      mode: "5-part",
      alternativeWeekdays: true,
      sloppyRanges: true,
    });
  } catch (error) {
    throw new TypeError(
      `Job "${name}": cron "${cron}" is no schedule (${describe(error).message})`,
    );
  }
}

/**
 * The process's crons, by name: Deno refuses a second `Deno.cron` of a name ("Cron with this name
 * already exists"), and a process may hold several apps of one manifest (tests), so each name is
 * registered once and enqueues for every open app; the last app closed ends it. `last`: the
 * latest slot it enqueued, from which a late firing catches up.
 */
const crons = new Map<
  string,
  { schedule: string; targets: Set<CronTarget>; end: AbortController; last?: number }
>();

const cronName = (job: string) => `job ${job}`;

function scheduleJob(target: CronTarget, schedule: string, closing?: AbortSignal): void {
  if (typeof Deno.cron !== "function") {
    log(
      "warn",
      `Job "${target.name}" has a cron schedule but Deno.cron is off: add "cron" to deno.json's "unstable"`,
    );
    return;
  }
  const name = cronName(target.name);
  let cron = crons.get(name);
  if (!cron) {
    const pattern = scheduleOf(target.name, schedule);
    const started = {
      schedule,
      targets: new Set<CronTarget>(),
      end: new AbortController(),
      last: undefined as number | undefined,
    };
    Deno.cron(name, schedule, { signal: started.end.signal }, async () => {
      const slots = dueSlots(pattern, Date.now(), started.last, target.name);
      if (slots.length === 0) return;
      const enqueues = [...started.targets].flatMap((each) =>
        slots.map((slot) => enqueueSlot(each, slot))
      );
      await Promise.all(enqueues);
      // Once enqueued: an enqueue that failed throws, and Deno.cron's retry of this handler
      // enqueues the slots again (the key keeps those that went to one run).
      started.last = slots.at(-1);
    });
    crons.set(name, cron = started);
  }
  cron.targets.add(target);
  const running = cron;
  closing?.addEventListener("abort", () => {
    running.targets.delete(target);
    if (running.targets.size > 0) return;
    running.end.abort();
    crons.delete(name);
  }, { once: true });
}

/** How many slots a late firing catches up at most, the latest kept. */
const CATCH_UP = 10;
/**
 * How early a firing may come and still count as its slot: Deno's timer and `Date.now()` are two
 * clocks, and a firing read a moment before its time would count as the slot before (done already).
 */
const EARLY_MS = 1_000;

/**
 * The slots a cron firing at `now` enqueues, oldest first: the latest time the schedule names at
 * or before `now` - however late the firing, it is that slot's, as the firings of other processes
 * on time were (a firing past the minute once counted as a new slot: two runs) - and, after one
 * this process enqueued (`last`), those it missed between them (none, or a slot's run was lost to
 * a firing that came after the next slot's time). At most `CATCH_UP`: a process stopped for a
 * while does not flood the queue; and none older than `REMEMBER_MS`, for which another process's
 * enqueue on time may be forgotten (its key expired): a process that stood still for days (a
 * suspended machine) ran such a slot again.
 */
export function dueSlots(schedule: Cron, now: number, last?: number, job?: string): number[] {
  // `previousRuns` takes times strictly before its reference, to the second.
  const reference = new Date(now + EARLY_MS + 1000);
  const runs = schedule.previousRuns(last === undefined ? 1 : CATCH_UP, reference)
    .map((date) => date.getTime())
    .filter((slot) => last === undefined || (slot > last && slot > now - REMEMBER_MS));
  if (last !== undefined) warnDropped(schedule, last, runs.at(-1) ?? now, job);
  return runs.reverse();
}

/** How many dropped slots a warning counts at most: a per-minute job stopped for a year stays cheap. */
const COUNT_DROPPED = 10_000;

/**
 * One `warn` line when slots after `last` and before `kept` (the oldest enqueued) were missed and
 * are not caught up: ops learn that runs may be missing (another process may have run them).
 */
function warnDropped(schedule: Cron, last: number, kept: number, job?: string): void {
  const oldest = schedule.nextRun(new Date(last))?.getTime();
  if (oldest === undefined || oldest >= kept) return;
  let dropped = 1;
  for (let at = oldest; dropped < COUNT_DROPPED; dropped++) {
    at = schedule.nextRun(new Date(at))?.getTime() ?? kept;
    if (at >= kept) break;
  }
  const count = dropped < COUNT_DROPPED ? `${dropped}` : `${COUNT_DROPPED} or more`;
  log(
    "warn",
    `Cron job ${job}: ${count} missed slots are not caught up (at most ${CATCH_UP}, none older ` +
      `than ${REMEMBER_MS / 86_400_000} days), the oldest ${new Date(oldest).toISOString()}`,
    { job, dropped, oldest: new Date(oldest).toISOString() },
  );
}

/**
 * Enqueues a cron job's run for the slot (the scheduled time, ms since the epoch), keyed by it:
 * every process's `Deno.cron` fires, one enqueue wins (false for the others).
 */
export function enqueueSlot({ kv, jobs, name }: CronTarget, slot: number): Promise<boolean> {
  const key = `cron:${name}:${new Date(slot).toISOString()}`;
  return jobs.enqueue(kv, name, undefined, { key });
}

function failed(
  error: unknown,
  name: string,
  id: string,
  attempt: number,
  retryIn: number | undefined,
  telemetry?: Telemetry,
): string {
  const digest = digestOf(error);
  const described = describe(error);
  const links = telemetry?.captureFailure(error, digest, undefined, { job: name }) ?? NO_LINKS;
  log("error", `Job ${name} failed: ${described.name}: ${described.message}`.split("\n")[0], {
    digest,
    job: name,
    job_id: loggedHeader(id), // a client's key, maybe: clipped as a header is
    attempt,
    // What comes next, for whoever reads the line: another try, or none (a dead job to look at).
    ...(retryIn === undefined ? { dead: true } : { retry_in_ms: retryIn }),
    ...links,
    error: described,
  });
  return digest;
}

function isJobMessage(message: unknown): message is JobMessage {
  return typeof message === "object" && message !== null &&
    typeof (message as JobMessage).job === "string" &&
    typeof (message as JobMessage).id === "string";
}
