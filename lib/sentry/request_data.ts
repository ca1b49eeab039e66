/**
 * @module
 * The request as Sentry's events and transactions show it (URL, method, headers), with what a
 * client chooses at any length clipped as log lines clip it: the method to 32 characters, the URL's
 * path and query to 1,024 (`loggedMethod`, `loggedPath`).
 */
import { winterCGRequestToRequestData } from "./sdk.ts";
import { loggedMethod, loggedPath } from "../server/log.ts";

/** `req` for an event's `request`: the SDK's own shape, its method and URL clipped. */
export function requestData(req: Request): ReturnType<typeof winterCGRequestToRequestData> {
  const url = new URL(req.url);
  return {
    ...winterCGRequestToRequestData(req),
    method: loggedMethod(req.method),
    url: url.origin + loggedPath(url.pathname + url.search),
  };
}
