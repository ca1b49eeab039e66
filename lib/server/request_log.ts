/**
 * @module
 * One JSON line per request (method, path, status, duration, request id, and its span's and trace's
 * ids when it has a span), off unless the app's `logRequests` option (`LOG_REQUESTS=1`) says so: by
 * default stdout carries only what needs attention - failures - so a digest search is not buried in
 * traffic. Written by the app's request frame (`frame.ts`), and by the page cache's hits ahead of
 * it (lib/cache/fast_hit.ts). And, always, a `warn` line per request refused - over a rate limit
 * (429), a body refused (`bodies.ts`), an action call that cannot be decoded (`read_call.ts`) - ten
 * a second of each kind at most and the rest counted, the count written by the next line or at the
 * second's end: ops count a lockout or a flood by them; the same, as `info`, for requests a
 * stopping server refused (503).
 */
import { type Level, log, loggedMethod, loggedPath } from "./log.ts";
import type { TraceIds } from "./telemetry.ts";

/**
 * The request's line. `start`: `performance.now()` when the request arrived; `trace`: its span's
 * ids (`Telemetry.requestIds`), for ops to go from the line to its trace - none without a span.
 */
export function logRequest(
  method: string,
  path: string,
  status: number,
  start: number,
  requestId: string | undefined,
  trace: TraceIds | undefined,
): void {
  const logged = { method: loggedMethod(method), path: loggedPath(path) };
  log("info", `${logged.method} ${logged.path} ${status}`, {
    ...logged,
    status,
    // Until the headers: a streamed page's body may still be on its way.
    duration_ms: Math.round(performance.now() - start),
    request_id: requestId ?? null,
    ...trace,
  });
}

/**
 * The most lines of one kind of refusal an app writes in a second: past them, refusals are counted.
 */
const REFUSAL_LINES_A_SECOND = 10;

/**
 * Writes a line (`warn` unless said) of a request that any client can send as often as it likes -
 * a refusal, a call from a page older than the build - of a `kind` the code names ("rate
 * limited", "body refused", "call refused", "stale call", "form cut"):
 * `REFUSAL_LINES_A_SECOND` of each kind at most. `flush()` writes the counts no line said yet
 * (the app's `close()`).
 */
export interface RefusalLines {
  (kind: string, msg: string, fields: Record<string, unknown>, level?: Level): void;
  flush(): void;
}

/** One kind's second: its lines written, the refusals counted since its last line, their timer. */
interface Window {
  second: number;
  written: number;
  unlogged: number;
  level: Level;
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * One app's refusal lines (`AppScope.refusals`). Whatever sends the requests chooses how many are
 * refused - a flood's 10,000 a second were 10,000 lines, each a synchronous write to stdout, a log
 * bill and event-loop time the sender chose - so past ten lines a second of a kind, a refusal of
 * it is counted, and the next line of that kind says how many went unwritten since the one
 * before (`unlogged_before`). Each kind has its own ten: a flood of one never hides another. A
 * flood that stops leaves no next line: the first refusal counted in a second sets a timer
 * (unref'd, one a kind a second at most: no cost per request) for the second's end, which writes
 * `"<kind>: N not logged"` with `kind` and `unlogged` if no line said them meanwhile; `flush()`
 * does so at once.
 */
export function refusalLines(): RefusalLines {
  const kinds = new Map<string, Window>();
  /** The refusals counted since the kind's last line, now said: its timer is done with. */
  const taken = (window: Window) => {
    clearTimeout(window.timer);
    window.timer = undefined;
    const unlogged = window.unlogged;
    window.unlogged = 0;
    return unlogged;
  };
  const sayUnlogged = (kind: string, window: Window) => {
    const unlogged = taken(window);
    if (unlogged > 0) log(window.level, `${kind}: ${unlogged} not logged`, { kind, unlogged });
  };
  const write = (
    kind: string,
    msg: string,
    fields: Record<string, unknown>,
    level: Level = "warn",
  ) => {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    let window = kinds.get(kind);
    if (!window) kinds.set(kind, window = { second, written: 0, unlogged: 0, level });
    if (second !== window.second) [window.second, window.written] = [second, 0];
    window.level = level;
    if (window.written === REFUSAL_LINES_A_SECOND) {
      if (window.unlogged++ === 0) {
        const counted = window;
        const timer = setTimeout(() => sayUnlogged(kind, counted), 1000 - now % 1000);
        Deno.unrefTimer(timer);
        counted.timer = timer;
      }
      return;
    }
    window.written++;
    const unlogged = window.unlogged > 0 ? taken(window) : 0;
    log(level, msg, unlogged > 0 ? { ...fields, unlogged_before: unlogged } : fields);
  };
  return Object.assign(write, {
    flush: () => kinds.forEach((window, kind) => sayUnlogged(kind, window)),
  });
}

/** What a refused request's line says, and its status and level. */
const REFUSED = {
  "rate limited": { status: 429, level: "warn" },
  stopping: { status: 503, level: "info" },
} as const;

/**
 * The line of a request refused, whatever `logRequests` says: "rate limited" (429: `rateLimit()`,
 * the sign-in and sign-up limits, a product's `httpError(429)`), "stopping" (503: a request that
 * came after the stop let go of KV). A refusal is what ops search and count, by path, and
 * `retry_after_s` says how long the client was told to wait.
 */
export function logRefused(
  refusals: RefusalLines,
  why: keyof typeof REFUSED,
  method: string,
  path: string,
  retryAfter: string | null,
  requestId: string | undefined,
): void {
  const { status, level } = REFUSED[why];
  const logged = { method: loggedMethod(method), path: loggedPath(path) };
  refusals(why, `${why}: ${logged.method} ${logged.path}`, {
    ...logged,
    status,
    retry_after_s: retryAfter === null ? null : Number(retryAfter),
    request_id: requestId ?? null,
  }, level);
}
