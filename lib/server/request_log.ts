/**
 * @module
 * One JSON line per request (method, path, status, duration, request id), off unless the app's
 * `logRequests` option (`LOG_REQUESTS=1`) says so: by default stdout carries only what needs
 * attention - failures - so a digest search is not buried in traffic. Written by the app's request
 * frame (`frame.ts`), and by the page cache's hits ahead of it (lib/cache/fast_hit.ts).
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
