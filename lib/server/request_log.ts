/**
 * @module
 * One JSON line per request (method, path, status, duration, request id), off unless the app's
 * `logRequests` option (`LOG_REQUESTS=1`) says so: by default stdout carries only what needs
 * attention - failures - so a digest search is not buried in traffic. Written by the app's request
 * frame (`frame.ts`), and by the page cache's hits ahead of it (lib/cache/fast_hit.ts). And, always,
 * one `warn` line per request refused over a rate limit (429): ops count a lockout or a flood by it.
 */
import { log, loggedMethod, loggedPath } from "./log.ts";

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

/**
 * The line of a request answered 429 (`rateLimit()`, the sign-in and sign-up limits, a product's
 * `httpError(429)`), whatever `logRequests` says: a refusal is what ops search and count ("rate
 * limited"), by path, and `retry_after_s` says how long the client was told to wait.
 */
export function logRateLimited(
  method: string,
  path: string,
  retryAfter: string | null,
  requestId: string | undefined,
): void {
  const logged = { method: loggedMethod(method), path: loggedPath(path) };
  log("warn", `rate limited: ${logged.method} ${logged.path}`, {
    ...logged,
    status: 429,
    retry_after_s: retryAfter === null ? null : Number(retryAfter),
    request_id: requestId ?? null,
  });
}
