/**
 * @module
 * Committing atomic operations that may lose a race: `commit` turns SQLite's "database is locked"
 * between handles into the `{ ok: false }` of a failed `check`, and `retrying` runs a
 * read-check-commit attempt again a bounded number of times, then gives up with a
 * {@link KvBusyError} - which ends that request on the failure screen, never the process; and
 * `inTurn` queues the writes of one isolate that would race for the same counter.
 */

/** A commit that did not apply: a `check` failed, or (`locked`) another handle held the file. */
export type CommitFailure = Deno.KvCommitError & { locked?: true };

/**
 * Commits `op`. With several handles on one file (`deno serve --parallel` workers, or processes),
 * a commit with `check`s that races another handle's can fail at once with SQLite's "database is
 * locked" instead of returning `{ ok: false }`; so does every such commit while another process
 * holds the write lock. Both come back as `{ ok: false, locked: true }`. A "database is locked"
 * after SQLite's busy timeout (seconds, not a race) is rethrown.
 */
export async function commit(
  op: Deno.AtomicOperation,
): Promise<Deno.KvCommitResult | CommitFailure> {
  const started = performance.now();
  try {
    return await op.commit();
  } catch (error) {
    const quick = performance.now() - started < 1000;
    if (quick && error instanceof TypeError && /database is locked/.test(error.message)) {
      return { ok: false, locked: true };
    }
    throw error;
  }
}

/**
 * Work that could not be committed in the allowed attempts (`append`, `limitCalls`): it ends that
 * request on the failure screen, never the process.
 *
 * @example
 * ```ts
 * import { append, KvBusyError, kvLog } from "shell/data";
 *
 * const LOG = kvLog<{ id: number }>(["log"]);
 * const kv = await Deno.openKv(":memory:");
 * try {
 *   await append(kv, LOG, (id) => ({ id }));
 * } catch (error) {
 *   if (error instanceof KvBusyError && error.locked) console.log("another process holds the file");
 * }
 * ```
 * @see docs/data.md - Limits and faults
 */
export class KvBusyError extends Error {
  /** `"KvBusyError"`. */
  override name = "KvBusyError";
  /**
   * The error for `what`, which `attempts` tries could not commit. The message names the work and
   * the cause only: it is what the failure's digest is made of, and a count that differs from one
   * request to the next (73 attempts, then 74, while a lock is held) gave one outage a digest per
   * request.
   *
   * @param what The work, for the message: nothing of the request's own in it (a client's address).
   * @param attempts How many attempts were made.
   * @param locked Whether the last failure was SQLite's lock held by another handle.
   */
  constructor(what: string, readonly attempts: number, readonly locked: boolean) {
    super(`${what}: not committed (${locked ? "database is locked" : "conflicting writes"})`);
  }
}

/**
 * Attempts before {@link KvBusyError}: enough for any real contention, bounded for a stuck file.
 */
const MAX_ATTEMPTS = 20;
/**
 * How long a commit refused by SQLite's lock (another handle writing) is tried again, however many
 * attempts that takes: another worker's long write - the build's assets kept in KV at start -
 * holds the lock for longer than the attempts last (about half a second) on a loaded machine, and
 * a post made meanwhile failed. Still well short of SQLite's busy timeout (5 s) for a stuck file.
 */
const LOCKED_MS = 2_000;

export type Commit = typeof commit;

/**
 * Runs `attempt` until it returns a result, at most `maxAttempts` times - or, while its commits
 * are refused by SQLite's lock, for up to `lockedMs`; `undefined` means its commit failed (a
 * `check` lost a race) and it should read again. Between tries it backs off a little, jittered and
 * growing, so that racers spread out. `attempt` commits with the function it is given, which notes
 * why a commit failed for the error; `what` names the work in it.
 */
export async function retrying<T>(
  what: string,
  attempt: (commit: Commit) => Promise<T | undefined>,
  maxAttempts = MAX_ATTEMPTS,
  lockedMs = LOCKED_MS,
): Promise<T> {
  let locked = false;
  const noting: Commit = async (op) => {
    const result = await commit(op);
    if (!result.ok) locked = "locked" in result;
    return result;
  };
  const started = performance.now();
  for (let i = 1;; i++) {
    const result = await attempt(noting);
    if (result !== undefined) return result;
    if (i >= maxAttempts && !(locked && performance.now() - started < lockedMs)) {
      throw new KvBusyError(what, i, locked);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** i, 50)));
  }
}

/**
 * How long work keeps its subject's turn while others wait. The turn only spares retries - every
 * commit is checked - so past this the next goes, and they race as other workers' do: a product's
 * function that never settles (an update awaiting a fetch with no timeout) held every later write
 * of its collections in this isolate for as long as the process lived.
 */
const TURN_MS = 2_000;

/** A subject's line in this isolate: when its last work began and settled, how many are in it. */
interface Line {
  began: Promise<number>;
  settled: Promise<unknown>;
  length: number;
}

/** The work waiting in this isolate, per store and subject. */
const turns = new WeakMap<Deno.Kv, Map<object | string, Line>>();

/**
 * Runs `work` once the earlier work on `subject` (a collection; a log's or a key's `keyName`) in
 * `kv` is done, or has had its turn for `TURN_MS`: writes that would all race for one counter go
 * one at a time within an isolate, so that only other workers and instances race - a few retries,
 * never fifty writes failing their `check` together. A subject is kept only while work on it waits.
 */
export function inTurn<T>(
  kv: Deno.Kv,
  subject: object | string,
  work: () => Promise<T>,
): Promise<T> {
  let ofStore = turns.get(kv);
  if (!ofStore) turns.set(kv, ofStore = new Map());
  let line = ofStore.get(subject);
  if (!line) {
    ofStore.set(
      subject,
      line = { began: Promise.resolve(0), settled: Promise.resolve(), length: 0 },
    );
  }
  const { began, settled } = line;
  // Work that finds no line starts at once, with no timer: a write of its own costs nothing more.
  const turn = ++line.length === 1
    ? settled
    : began.then((at) => settledOrLate(settled, at + TURN_MS - performance.now()));
  line.began = turn.then(() => performance.now());
  const result = turn.then(work);
  // Out of the line before the next work starts, which waits for this.
  line.settled = result.catch(() => {}).then(() => {
    if (--line.length === 0) ofStore.delete(subject);
  });
  return result;
}

/** Resolves once `before` does, or in `ms`, whichever is first. */
function settledOrLate(before: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms));
    Deno.unrefTimer(timer);
  });
  return Promise.race([before, late]).finally(() => clearTimeout(timer));
}

/**
 * How many works on `subject` in `kv` are in this isolate's line: running or waiting their turn.
 */
export function inLine(kv: Deno.Kv, subject: object | string): number {
  return turns.get(kv)?.get(subject)?.length ?? 0;
}

/** The order `inTurns` takes subjects in: the order this isolate first saw them. */
const ranks = new WeakMap<object, number>();
let ranked = 0;

/**
 * Runs `work` once it has the turn of every one of `subjects` in `kv` (a commit writing several
 * collections). Turns are taken one after the other in one order for every caller, so two works
 * each holding the subject the other waits for cannot happen.
 */
export function inTurns<T>(
  kv: Deno.Kv,
  subjects: readonly object[],
  work: () => Promise<T>,
): Promise<T> {
  if (subjects.length === 1) return inTurn(kv, subjects[0], work);
  const rank = (subject: object) => {
    if (!ranks.has(subject)) ranks.set(subject, ranked++);
    return ranks.get(subject)!;
  };
  const ordered = [...new Set(subjects)].sort((a, b) => rank(a) - rank(b));
  const inAll = ordered.reduceRight<() => Promise<T>>(
    (inner, subject) => () => inTurn(kv, subject, inner),
    work,
  );
  return inAll();
}
