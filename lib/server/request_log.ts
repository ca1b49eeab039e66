/**
 * @module
 * One JSON line per request (method, path, status, duration, request id, and its span's and trace's
 * ids when it has a span), off unless the app's `logRequests` option (`LOG_REQUESTS=1`) says so: by
 * default stdout carries only what needs attention - failures - so a digest search is not buried in
 * traffic. Written by the app's request
 * frame (`frame.ts`), and by the page cache's hits ahead of it (lib/cache/fast_hit.ts). And, always,
 * a `warn` line per request refused - over a rate limit (429), a body refused (`bodies.ts`), an
 * action call that cannot be decoded (`read_call.ts`) - ten a second of each kind at most and the
 * rest counted: ops count a lockout or a flood by them; the same, as `info`, for requests a
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

/** The most lines of one kind of refusal an app writes in a second: past them, refusals are counted. */
const REFUSAL_LINES_A_SECOND = 10;

/**
 * Writes a line (`warn` unless said) of a request that any client can send as often as it likes -
 * a refusal, a call from a page older than the build - of a `kind` the code names ("rate
 * limited", "body refused", "call refused", "stale call", "form cut"):
 * `REFUSAL_LINES_A_SECOND` of each kind at most.
 */
export type RefusalLines = (
  kind: string,
  msg: string,
  fields: Record<string, unknown>,
  level?: Level,
) => void;

/**
 * One app's refusal lines (`AppScope.refusals`). Whatever sends the requests chooses how many are
 * refused - a flood's 10,000 a second were 10,000 lines, each a synchronous write to stdout, a log
 * bill and event-loop time the sender chose - so past ten lines a second of a kind, a refusal of
 * it is counted, and the next line of that kind says how many went unwritten since the one
 * before (`unlogged_before`). Each kind has its own ten: a flood of one never hides another.
 */
export function refusalLines(): RefusalLines {
  const kinds = new Map<string, { second: number; written: number; unlogged: number }>();
  return (kind, msg, fields, level = "warn") => {
    const now = Math.floor(Date.now() / 1000);
    let count = kinds.get(kind);
    if (!count) kinds.set(kind, count = { second: now, written: 0, unlogged: 0 });
    if (now !== count.second) [count.second, count.written] = [now, 0];
    if (count.written === REFUSAL_LINES_A_SECOND) {
      count.unlogged++;
      return;
    }
    count.written++;
    log(level, msg, count.unlogged > 0 ? { ...fields, unlogged_before: count.unlogged } : fields);
    count.unlogged = 0;
  };
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
