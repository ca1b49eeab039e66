/**
 * @module
 * The definition API of background jobs: `defineJobs` checks the product's declarations
 * (`routes/_jobs.ts`) once and gives the typed ways to enqueue them - alone, or in a commit of the
 * product's own - once per job and `key` however often it is asked.
 */
import { retrying } from "../commit.ts";
import {
  deadKey,
  isSlotId,
  type JobMessage,
  keyKey,
  MAX_DELAY_MS,
  REMEMBER_MS,
  SLOT,
} from "./message.ts";
import { fits, keptFaithfully } from "./payload.ts";
import { scheduleOf } from "./schedule.ts";
import { SlotKeyError } from "./slot_key.ts";

/** How long a try may take unless its job says (`timeout`). */
export const TIMEOUT_MS = 5 * 60 * 1000;
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
   * KV's keys (about 2 KB with the job's name) is refused with a `KvLimitError`. A cron job's
   * slots are keyed `cron:NAME:TIME`: a key of that beginning is its schedule's, a `SlotKeyError`
   * (400, expected: a client's id passed on is answered as its mistake).
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

/** A slot's enqueue (`cron.ts`): the one way to key a cron job's run in its slots' namespace. */
export interface SlotOptions extends EnqueueOptions {
  [SLOT]?: true;
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
    { key, delay, [SLOT]: slot }: SlotOptions = {},
  ) => {
    if (!Object.hasOwn(definitions, name)) {
      throw new TypeError(`No job named "${name}" in routes/_jobs.ts`);
    }
    // Its slots' keys are Deno.cron's: one taken first (a client's id as the key) skipped that
    // slot - its enqueue found the key taken - and ran the taker's payload as the slot's run.
    if (key !== undefined && !slot && definitions[name].cron !== undefined && isSlotId(name, key)) {
      throw new SlotKeyError(name, key);
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

/** Has each enqueue of `jobs` carry the trace context `read` gives (`Telemetry.jobContext`). */
export function traceEnqueues(jobs: Jobs, read: () => Record<string, string> | undefined): void {
  traced.set(jobs, read);
}

/**
 * Refuses a retry KV's queue would not take: found at start-up, rather than by `kv.enqueue` when a
 * job first fails.
 */
export function checkRetries(retries: number[], whose: string): void {
  const bad = retries.find((ms) => !(ms >= 0 && ms <= MAX_DELAY_MS));
  if (bad !== undefined) {
    throw new TypeError(`${whose}: a retry of ${bad} ms (0 to 30 days, KV's queue's limit)`);
  }
}
