/**
 * @module
 * `timeLimit(ms)`: the server's one way to bound a piece of work in time with a signal, in place of
 * `AbortSignal.timeout`. Deno refs that one's timer for as long as anything listens to its signal,
 * and nothing clears it: `fetch` and React's render let go when they end, but a listener kept (a
 * `Request` made with the signal, whose own signal the app listens to) held a stopping `deno serve`
 * (which waits for the event loop to empty) for the whole limit after the work ended: 61 s after
 * SIGTERM for the page cache's render limit. This timer never holds the process, whoever listens,
 * and the work's end clears it (`using`, or `clear()`).
 */

/** The longest delay a timer holds: past it (2^31 - 1 ms, some 24 days) Deno sets it to 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A signal that aborts when time is up, for one piece of work; dispose of it when the work ends.
 */
export interface TimeLimit extends Disposable {
  /**
   * Aborts with a `TimeoutError` `DOMException` once the time is up, as `AbortSignal.timeout`'s.
   */
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
    () =>
      controller.abort(
        new DOMException("The operation was aborted due to timeout", "TimeoutError"),
      ),
    ms,
  );
  Deno.unrefTimer(timer);
  const clear = () => clearTimeout(timer);
  return { signal: controller.signal, clear, [Symbol.dispose]: clear };
}
