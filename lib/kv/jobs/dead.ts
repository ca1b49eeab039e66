/**
 * @module
 * Dead letters: a job past its last try is kept under `["_jobs", "dead", name, id]` for a week
 * (where KV itself keeps a delivery that never reached `run`); ops list them, run one again once
 * the cause is fixed, or drop it (`deno task jobs`).
 */
import { retrying } from "../commit.ts";
import { checkKey } from "../key_too_long.ts";
import { keySize, MAX_KEY_BYTES } from "../limits.ts";
import { deadKey, type JobMessage, triedOf } from "./message.ts";

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
 * enqueue again, delete; or page on with `after`, the last one read. A `name` too long for a key
 * names no job (none).
 *
 * @throws {KeyTooLongError} When `after` is too long for a key (a page's link, often a client's):
 * a 400 (code `too_long`) in a request.
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
  // What an ops page's link gave: a name too long names no job, a place too long is the link's.
  if (name !== undefined && !storable(name, "")) return [];
  if (after) checkKey(() => "deadJobs", deadKey(after.job, after.id), 2);
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
 * Tried marks deleted in one commit: well within KV's mutations (1,000) and its payload (800 KB)
 * for keys of 2 KB, with the dead letter's message (64 KB at most) beside them.
 */
const MARKS_A_COMMIT = 100;

/**
 * Runs a dead job again: its failed tries' marks go, then its entry goes and its message is
 * enqueued in one commit, as its first try, under the same id, with its key and the trace it was
 * enqueued in (its lines, events and span stay tied to the earlier ones). `false` when there is no
 * such dead job (retried or dropped already, or past its week). For ops once the cause is fixed
 * (`deno task jobs retry NAME ID`), or an admin's page.
 *
 * @throws {KvBusyError} When another handle (a server's process) kept the file locked for seconds.
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
  if (!storable(name, id)) return false;
  const entry = await kv.get<DeadLetter>(deadKey(name, id));
  if (entry.value === null) return false;
  const { payload, keyed, trace } = entry.value;
  const message: JobMessage = { job: name, id, payload, attempt: 0 };
  if (keyed) message.keyed = keyed;
  if (trace) message.trace = trace;
  // Its failed tries' marks go before it runs: each would have its try, from the first, run
  // nothing. A mark a try, and a job may have more tries than one commit takes deletes (KV's
  // 1,000; a retry a minute for a day is 1,440): all but the last batch go first, each while the
  // dead letter is as read, and the last with the letter and the enqueue.
  const marks = await Array.fromAsync(kv.list({ prefix: triedOf(name, id) }), ({ key }) => key);
  const last = marks.splice(Math.max(0, marks.length - MARKS_A_COMMIT));
  const deleting = (keys: Deno.KvKey[]) => {
    const atomic = kv.atomic().check(entry);
    for (const key of keys) atomic.delete(key);
    return atomic;
  };
  const what = `retrying dead job "${name}"`;
  for (let at = 0; at < marks.length; at += MARKS_A_COMMIT) {
    const batch = marks.slice(at, at + MARKS_A_COMMIT);
    if (!(await whileDead(what, () => deleting(batch)))) return false;
  }
  const moved = () =>
    deleting(last).delete(deadKey(name, id))
      .enqueue(message, { keysIfUndelivered: [deadKey(name, id)] });
  return await whileDead(what, moved);
}

/**
 * Commits what `op` makes (checked against the dead letter as read): `false` once the letter
 * changed (retried or dropped meanwhile). Tried again while another handle holds the file, as
 * every write of the shell is: `deno task jobs` is a process beside the servers'.
 */
function whileDead(what: string, op: () => Deno.AtomicOperation): Promise<boolean> {
  return retrying(what, async (commit) => {
    const result = await commit(op());
    return result.ok || ("locked" in result ? undefined : false);
  });
}

/**
 * Drops a dead job for good (`deno task jobs drop NAME ID`): `false` when there is no such one.
 *
 * @throws {KvBusyError} When another handle (a server's process) kept the file locked for seconds.
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
  if (!storable(name, id)) return false;
  const entry = await kv.get(deadKey(name, id));
  if (entry.value === null) return false;
  return await whileDead(
    `dropping dead job "${name}"`,
    () => kv.atomic().check(entry).delete(deadKey(name, id)),
  );
}

/**
 * A dead job as kept under `deadKey`: KV's own dead letter is the message, tries and all; ours is
 * the message less its tries, plus the last failure's digest and time.
 */
export type DeadLetter = DeadJob & Pick<JobMessage, "keyed" | "trace">;

export function deadLetter(
  { job, id, payload, keyed, trace }: JobMessage,
  digest: string,
): DeadLetter {
  const dead: DeadLetter = { job, id, payload, digest, failedAt: Date.now() };
  if (keyed) dead.keyed = keyed;
  if (trace) dead.trace = trace;
  return dead;
}

/** Whether a dead job of `name` and `id` could be stored: an enqueue refuses a key too long. */
function storable(name: string, id: string): boolean {
  return keySize(deadKey(name, id)) <= MAX_KEY_BYTES;
}
