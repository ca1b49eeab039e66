/**
 * @module
 * How the entry points stop, cleanly and within a bound. Every request ends by its deadline (a
 * page's stream has as long again after its shell), event streams end when the app closes, and
 * past the grace whatever is still open is no request of ours: a client Deno keeps, one that
 * stopped in the middle of a body, which Deno would wait for as long as the client likes.
 *  - `deno task start` (`start.ts`) shuts its own server down on SIGTERM or SIGINT, and - run by
 *    the launcher (`launch.ts`) - when the launcher is gone (`untilParentGone`);
 *  - `deno serve` (with or without `--parallel`) and Deno Deploy stop the server themselves on
 *    SIGTERM: they stop accepting and wait for every connection, with no bound and for ever on an
 *    event stream. `endOnSignals` closes the app's streams then and bounds the wait.
 */
import { log } from "../server/log.ts";
import { DEFAULT_OPTIONS } from "../server/options.ts";
import type { Telemetry } from "../server/telemetry.ts";
import { MAX_TIMER_MS } from "../server/time_limit.ts";
import type { Started } from "./app.ts";
import type { Settings } from "./settings.ts";

/** How long Sentry may take to take what it has not yet received, on the way out. */
export const FLUSH_MS = 2000;

/**
 * How long a stop waits for connections: two deadlines (a page's stream gets as long again after
 * its shell) and a second. With the deadline off, no bound; nor with one whose grace no timer can
 * hold (`REQUEST_TIMEOUT_MS` past some 12 days), which cut the stop short a moment after SIGTERM.
 */
export function graceMs(settings: Settings): number {
  const requestTimeoutMs = settings.app.requestTimeoutMs ?? DEFAULT_OPTIONS.requestTimeoutMs;
  const ms = 2 * requestTimeoutMs + 1000;
  return requestTimeoutMs > 0 && ms <= MAX_TIMER_MS ? ms : Infinity;
}

/** The end of a stop that ran out of grace: said, Sentry flushed (bounded), exit 0. */
export async function exitPastGrace(ms: number, why: string, telemetry?: Telemetry) {
  log("warn", `connections still open ${ms} ms after ${why}: exiting without them`);
  await telemetry?.flush(FLUSH_MS);
  Deno.exit(0);
}

/**
 * For `main.ts` under `deno serve` and on Deno Deploy: on SIGTERM or SIGINT, Deno's own stop runs
 * (no new connections; it waits for the open ones) and the app closes its event streams, so that
 * the wait ends once the requests in flight are answered and the process exits 0 by itself - with
 * what Sentry is still sending, each send bounded by its timeout. The store closes once the app's
 * jobs under way have ended and no request is in flight (pages rendered to their end): its queue
 * listener (`routes/_jobs.ts`) would otherwise hold the process for the whole grace; a request
 * that comes after that (on a connection Deno had not yet closed) is refused 503 (`App.stop`).
 * Past the grace it exits 0 anyway. Under `--parallel` each worker does this; any worker's exit
 * ends the process.
 */
export function endOnSignals({ app, kv, settings, telemetry }: Started): void {
  const ms = graceMs(settings);
  let stopping = false;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => {
      if (stopping) return;
      stopping = true;
      void app.stop().then(() => kv.close());
      if (ms === Infinity) return;
      // Unref'd: a stop that drains sooner is not held for it.
      Deno.unrefTimer(setTimeout(() => exitPastGrace(ms, signal, telemetry), ms));
    });
  }
}

/**
 * Resolves when the process that started this one is gone: it holds our stdin open and never
 * writes, so its end - an exit, a crash, SIGKILL - is the end of stdin, which the kernel delivers
 * whatever killed it. (A parent-death signal is Linux-only and not offered by Deno; polling the
 * parent's pid races its reuse.)
 */
export async function untilParentGone(): Promise<void> {
  const reader = Deno.stdin.readable.getReader();
  try {
    while (!(await reader.read()).done);
  } catch {
    // stdin failing is its end too
  }
}
