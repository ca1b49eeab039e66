/**
 * @module
 * A job's message as it travels through KV's queue, and the keys of the store that the jobs'
 * modules share: what each job id's key, dead letter, try lease and cron turn are called.
 */

/** How long a key refuses a second enqueue, and a done job a second run: a provider's retries. */
export const REMEMBER_MS = 7 * 24 * 60 * 60 * 1000;
/** The longest delay KV's queue takes (`kv.enqueue` refuses more): a retry's at most. */
export const MAX_DELAY_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * A cron job's run for a slot (the scheduled time, ms since the epoch): its id, and the key every
 * process's `Deno.cron` enqueues it with, so that one enqueue wins.
 */
export const slotId = (name: string, slot: number): string =>
  `cron:${name}:${new Date(slot).toISOString()}`;

/** Whether `id` is in the namespace of `name`'s slots: its run is then a slot's, in its turn. */
export const isSlotId = (name: string, id: string): boolean => id.startsWith(`cron:${name}:`);

/** The mark of a slot's enqueue (`cron.ts`): the one enqueue that may key a run in that namespace. */
export const SLOT: unique symbol = Symbol("slot");

/** A job as it travels through KV's queue. */
export interface JobMessage {
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

/** Whether a queue message is a job's (not somebody's own `kv.enqueue` on the app's store). */
export function isJobMessage(message: unknown): message is JobMessage {
  return typeof message === "object" && message !== null &&
    typeof (message as JobMessage).job === "string" &&
    typeof (message as JobMessage).id === "string";
}

/** Whether an enqueue's key was taken (the job enqueued before under it). */
export const keyKey = (name: string, key: string): Deno.KvKey => ["_jobs", "key", name, key];
/** A job id that ran to its end (or a cron slot skipped): a delivery again of it runs nothing. */
export const doneKey = (name: string, id: string): Deno.KvKey => ["_jobs", "done", name, id];
/** A job past its last try, or one KV could not deliver. */
export const deadKey = (name: string, id: string): Deno.KvKey => ["_jobs", "dead", name, id];
/**
 * A try that failed, its outcome (its retry, or its dead letter) committed: a delivery again of it
 * (its process died before KV's queue heard the try had ended) finds it and runs nothing.
 */
export function triedKey(name: string, id: string, attempt: number): Deno.KvKey {
  return [...triedOf(name, id), attempt];
}
/** The marks of every failed try of a job id (`triedKey`). */
export const triedOf = (name: string, id: string): Deno.KvKey => ["_jobs", "tried", name, id];
/** A cron job's lease: one run of the job at a time, whichever slot. */
export const cronKey = (name: string): Deno.KvKey => ["_jobs", "cron", name];
/** Any other job's: one run of each try (its id and attempt) at a time. */
export function tryKey(name: string, id: string, attempt: number): Deno.KvKey {
  return ["_jobs", "try", name, id, attempt];
}
