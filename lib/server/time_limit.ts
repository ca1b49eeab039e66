/**
 * @module
 * `timeLimit(ms)`: the server's one way to bound a piece of work in time with a signal, in place of
 * `AbortSignal.timeout`. Deno refs that timer as soon as anything listens to its signal (`fetch`,
 * `AbortSignal.any`, React's render) and nothing clears it, so a stopping `deno serve` (which
 * waits for the event loop to empty) lingered for the whole limit after work long finished: a
 * render limit of a minute after SIGTERM, once. This timer never holds the process, and the
 * work's end clears it (`using`, or `clear()`).
 */

/** A signal that aborts when time is up, for one piece of work; dispose of it when the work ends. */
export interface TimeLimit extends Disposable {
  /** Aborts with a `TimeoutError` `DOMException` once the time is up, as `AbortSignal.timeout`'s. */
  readonly signal: AbortSignal;
  /** The work ended: the timer goes (the signal stays as it is). */
  clear(): void;
}

/**
 * A signal that aborts `ms` from now, unless cleared first; its timer never keeps the process
 * alive, so work it bounds is all that can.
 *
 * @example
 * ```ts
 * using limit = timeLimit(5_000);
 * const res = await fetch("http://127.0.0.1:9/", { signal: limit.signal }).catch(() => undefined);
 * await res?.body?.cancel();
 * ```
 */
export function timeLimit(ms: number): TimeLimit {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("The time limit passed", "TimeoutError")),
    ms,
  );
  Deno.unrefTimer(timer);
  const clear = () => clearTimeout(timer);
  return { signal: controller.signal, clear, [Symbol.dispose]: clear };
}
