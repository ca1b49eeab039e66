/**
 * @module
 * Every request has a deadline (`requestTimeoutMs`, 10 s by default; `0` turns it off):
 * a handler still waiting, or a page still rendering - a stuck upstream behind a `fetch` with no
 * timeout, say - when it passes ends on the failure screen with a digest, before the shell as a
 * 500 and after it through the streamed failure script, instead of holding the user and the
 * connection forever.
 *
 * One timer serves every deadline in flight. They all have the same length, so they expire in the
 * order they started: a request costs an insertion into an ordered set and a deletion, where a
 * timer of its own (set, then cleared on nearly every request) cost more than the rest of this
 * module's work together.
 */

declare module "./internals.ts" {
  interface Internals {
    /** The request's deadline, for the renderer and the body guard; absent when off. */
    deadline: Deadline;
  }
}

export class DeadlineExceeded extends Error {
  constructor(ms: number) {
    super(`The request did not finish within ${ms} ms (REQUEST_TIMEOUT_MS)`);
    this.name = "DeadlineExceeded";
  }
}

export interface Deadline {
  /** When it passes, on `performance.now()`'s clock: work with a timeout of its own ends before. */
  readonly expiresAt: number;
  /** Its length (`requestTimeoutMs`). */
  readonly ms: number;
  /** Calls `expired` if the deadline passes before `clear()`; at once if it has passed. */
  onExpire(expired: (error: DeadlineExceeded) => void): void;
  /** Stops the clock: the work finished in time. */
  clear(): void;
}

/** Starts deadlines of one length; `start()` gives none when the length is 0 (off). */
export interface DeadlineClock {
  start(): Deadline | undefined;
}

export function deadlineClock(ms: number): DeadlineClock {
  if (!(ms > 0)) return { start: () => undefined };
  /** Oldest first, which is also the order they expire in. */
  const pending = new Set<PendingDeadline>();
  let timer: ReturnType<typeof setTimeout> | undefined;

  const arm = (expiresAt: number) => {
    timer = setTimeout(expireDue, Math.max(0, expiresAt - performance.now()));
    // Waiting deadlines never keep the process alive.
    Deno.unrefTimer(timer);
  };
  function expireDue() {
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

  return {
    start() {
      const deadline = new PendingDeadline(ms, pending);
      pending.add(deadline);
      if (timer === undefined) arm(deadline.expiresAt);
      return deadline;
    },
  };
}

/** Callbacks rather than an AbortSignal: a request's listeners cost more than all of the rest. */
class PendingDeadline implements Deadline {
  readonly expiresAt: number;
  #expired: ((error: DeadlineExceeded) => void)[] = [];
  #error?: DeadlineExceeded;

  constructor(readonly ms: number, readonly pending: Set<PendingDeadline>) {
    this.expiresAt = performance.now() + ms;
  }

  onExpire(expired: (error: DeadlineExceeded) => void): void {
    if (this.#error) expired(this.#error);
    else this.#expired.push(expired);
  }

  clear(): void {
    this.pending.delete(this);
  }

  expire(): void {
    this.#error = new DeadlineExceeded(this.ms);
    for (const expired of this.#expired) expired(this.#error);
  }
}

/**
 * Settles like `work`, or rejects with `DeadlineExceeded` if the deadline passes first. The caller
 * clears the deadline once it is done waiting (a `finally`): one promise a request, no closures of
 * this function's own.
 */
export function withinDeadline<T>(work: Promise<T>, deadline: Deadline | undefined): Promise<T> {
  if (!deadline) return work;
  return new Promise<T>((resolve, reject) => {
    deadline.onExpire(reject);
    work.then(resolve, reject);
  });
}
