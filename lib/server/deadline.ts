/**
 * @module
 * Every routed request has a deadline (`REQUEST_TIMEOUT_MS`, 10 s by default; `0` turns it off):
 * a handler still waiting, or a page still rendering — a stuck upstream behind a `fetch` with no
 * timeout, say — when it passes ends on the failure screen with a digest, before the shell as a
 * 500 and after it through the streamed failure script, instead of holding the user and the
 * connection forever.
 *
 * One timer serves every deadline in flight. They all have the same length, so they expire in the
 * order they started: a request costs an insertion into an ordered set and a deletion, where a
 * timer of its own (set, then cleared on nearly every request) cost more than the rest of this
 * module's work together.
 */

declare module "hono" {
  interface ContextVariableMap {
    /** The routed request's deadline, for the renderer. */
    deadline: Deadline;
  }
}

export const REQUEST_TIMEOUT_MS = Number(Deno.env.get("REQUEST_TIMEOUT_MS") ?? 10_000);

export class DeadlineExceeded extends Error {
  constructor(ms: number) {
    super(`The request did not finish within ${ms} ms (REQUEST_TIMEOUT_MS)`);
    this.name = "DeadlineExceeded";
  }
}

export interface Deadline {
  /** Calls `expired` if the deadline passes before `clear()`. */
  onExpire(expired: (error: DeadlineExceeded) => void): void;
  /** Stops the clock: the work finished in time. */
  clear(): void;
}

/** Callbacks rather than an AbortSignal: a request's listeners cost more than all of the rest. */
class PendingDeadline implements Deadline {
  readonly expiresAt = performance.now() + REQUEST_TIMEOUT_MS;
  #expired: ((error: DeadlineExceeded) => void)[] = [];

  onExpire(expired: (error: DeadlineExceeded) => void): void {
    this.#expired.push(expired);
  }

  clear(): void {
    pending.delete(this);
  }

  expire(): void {
    const error = new DeadlineExceeded(REQUEST_TIMEOUT_MS);
    for (const expired of this.#expired) expired(error);
  }
}

/** Oldest first, which is also the order they expire in. */
const pending = new Set<PendingDeadline>();
let timer: ReturnType<typeof setTimeout> | undefined;

/** A deadline `REQUEST_TIMEOUT_MS` from now, or none when the timeout is off. */
export function startDeadline(): Deadline | undefined {
  if (!(REQUEST_TIMEOUT_MS > 0)) return undefined;
  const deadline = new PendingDeadline();
  pending.add(deadline);
  if (timer === undefined) arm(deadline.expiresAt);
  return deadline;
}

function arm(expiresAt: number): void {
  timer = setTimeout(expireDue, Math.max(0, expiresAt - performance.now()));
  // Waiting deadlines never keep the process alive.
  Deno.unrefTimer(timer);
}

function expireDue(): void {
  const now = performance.now();
  for (const deadline of pending) {
    if (deadline.expiresAt > now) break;
    pending.delete(deadline);
    deadline.expire();
  }
  // Re-armed only now: expiring may start deadlines of their own meanwhile.
  timer = undefined;
  const next = pending.values().next();
  if (!next.done) arm(next.value.expiresAt);
}

/**
 * Settles like `work`, or rejects with `DeadlineExceeded` if the deadline passes first; either
 * way the deadline is cleared.
 */
export function withinDeadline<T>(work: Promise<T>, deadline: Deadline | undefined): Promise<T> {
  if (!deadline) return work;
  return new Promise<T>((resolve, reject) => {
    deadline.onExpire(reject);
    work.then(resolve, reject).finally(() => deadline.clear());
  });
}
