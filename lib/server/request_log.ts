/**
 * @module
 * One JSON line per request (method, path, status, duration, request id), off unless the app's
 * `logRequests` option (`LOG_REQUESTS=1`) says so: by default stdout carries only what needs
 * attention - failures - so a digest search is not buried in traffic. When off, no middleware is
 * installed at all.
 */
import type { MiddlewareHandler } from "hono";
import { log } from "./log.ts";
import { internalsOf } from "./internals.ts";

export const requestLog: MiddlewareHandler = async function requestLog(c, next) {
  const start = performance.now();
  await next();
  logRequest(c.req.method, c.req.path, c.res.status, start, internalsOf(c).requestId);
};

/**
 * The request's line: also for a response made ahead of the app's middleware (a page cache hit,
 * lib/cache/fast_hit.ts). `start`: `performance.now()` when the request arrived.
 */
export function logRequest(
  method: string,
  path: string,
  status: number,
  start: number,
  requestId: string | undefined,
): void {
  log("info", `${method} ${path} ${status}`, {
    method,
    path,
    status,
    // Until the headers: a streamed page's body may still be on its way.
    duration_ms: Math.round(performance.now() - start),
    request_id: requestId ?? null,
  });
}
