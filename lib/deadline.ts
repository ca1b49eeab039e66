/**
 * @module
 * Every routed request has a deadline (`REQUEST_TIMEOUT_MS`, 10 s by default; `0` turns it off):
 * a handler still waiting, or a page still rendering — a stuck upstream behind a `fetch` with no
 * timeout, say — when it passes ends on the failure screen with a digest, before the shell as a
 * 500 and after it through the streamed failure script, instead of holding the user and the
 * connection forever.
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
  /** Aborts with `DeadlineExceeded` when the deadline passes. */
  signal: AbortSignal;
  /** Stops the clock: the work finished in time. */
  clear(): void;
}

/** A deadline `ms` from now, or none when the timeout is off. */
export function startDeadline(ms = REQUEST_TIMEOUT_MS): Deadline | undefined {
  if (!(ms > 0)) return undefined;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DeadlineExceeded(ms)), ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** Settles like `work`, or rejects with the deadline's reason if that passes first. */
export function raceDeadline<T>(work: Promise<T>, deadline: Deadline | undefined): Promise<T> {
  if (!deadline) return work;
  const { signal } = deadline;
  return new Promise<T>((resolve, reject) => {
    const expire = () => reject(signal.reason);
    if (signal.aborted) return expire();
    signal.addEventListener("abort", expire, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", expire));
  });
}
