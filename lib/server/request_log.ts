/**
 * @module
 * One JSON line per request (method, path, status, duration, request id), off unless the app's
 * `logRequests` option (`LOG_REQUESTS=1`) says so: by default stdout carries only what needs
 * attention - failures - so a digest search is not buried in traffic. Written by the app's request
 * frame (`frame.ts`), and by the page cache's hits ahead of it (lib/cache/fast_hit.ts). And, always,
 * a `warn` line per request refused over a rate limit (429), ten a second at most and the rest
 * counted: ops count a lockout or a flood by them; the same, as `info`, for requests a stopping
 * server refused (503).
 */
import { type Level, log, loggedMethod, loggedPath } from "./log.ts";

/** The request's line. `start`: `performance.now()` when the request arrived. */
export function logRequest(
  method: string,
  path: string,
  status: number,
  start: number,
  requestId: string | undefined,
): void {
  const logged = { method: loggedMethod(method), path: loggedPath(path) };
  log("info", `${logged.method} ${logged.path} ${status}`, {
    ...logged,
    status,
    // Until the headers: a streamed page's body may still be on its way.
    duration_ms: Math.round(performance.now() - start),
    request_id: requestId ?? null,
  });
}

/** The most refusal lines an app writes in a second: past them, refusals are counted, not written. */
const REFUSAL_LINES_A_SECOND = 10;

/** What a refusal's line is written by (`refusalLog`). */
type RefusalLog = (
  method: string,
  path: string,
  retryAfter: string | null,
  requestId: string | undefined,
) => void;

/**
 * The lines of requests refused with `status`, whatever `logRequests` says, each saying `why`: a
 * refusal is what ops search and count - "rate limited" (429: `rateLimit()`, the sign-in and
 * sign-up limits, a product's `httpError(429)`), "stopping" (503: a request that came after the
 * stop let go of KV) - by path, and `retry_after_s` says how long the client was told to wait.
 * One app's, `REFUSAL_LINES_A_SECOND` at most: a flood's size is its sender's choice (10,000
 * refusals a second were 10,000 lines, each a synchronous write to stdout), so past them a refusal
 * is counted, and the next line written says how many went unwritten since the one before
 * (`unlogged_before`).
 */
export function refusalLog(level: Level, why: string, status: number): RefusalLog {
  let second = 0;
  let written = 0;
  let unlogged = 0;
  return (method, path, retryAfter, requestId) => {
    const now = Math.floor(Date.now() / 1000);
    if (now !== second) [second, written] = [now, 0];
    if (written === REFUSAL_LINES_A_SECOND) {
      unlogged++;
      return;
    }
    written++;
    const logged = { method: loggedMethod(method), path: loggedPath(path) };
    log(level, `${why}: ${logged.method} ${logged.path}`, {
      ...logged,
      status,
      retry_after_s: retryAfter === null ? null : Number(retryAfter),
      request_id: requestId ?? null,
      ...(unlogged > 0 ? { unlogged_before: unlogged } : {}),
    });
    unlogged = 0;
  };
}
