/**
 * @module
 * The request as Sentry's events and transactions show it (URL, method, headers), with what a
 * client chooses at any length clipped as log lines clip it: the method to 32 characters, the URL's
 * path and query to 1,024 (`loggedMethod`, `loggedPath`), its query string and each header's value
 * to 1,024 (`loggedHeader`) - an `X-Forwarded-For` of thousands of entries, a header of the
 * client's own of tens of kilobytes were carried whole by every event and sampled transaction.
 */
import { winterCGRequestToRequestData } from "./sdk.ts";
import { loggedHeader, loggedMethod, loggedPath } from "../server/log.ts";

/** `req` for an event's `request`: the SDK's own shape, its method, URL and headers clipped. */
export function requestData(req: Request): ReturnType<typeof winterCGRequestToRequestData> {
  const url = new URL(req.url);
  const data = winterCGRequestToRequestData(req);
  return {
    ...data,
    method: loggedMethod(req.method),
    url: url.origin + loggedPath(url.pathname + url.search),
    ...typeof data.query_string === "string" &&
      { query_string: loggedHeader(data.query_string) },
    ...data.headers && {
      headers: Object.fromEntries(
        Object.entries(data.headers).map(([name, value]) => [name, loggedHeader(value)]),
      ),
    },
  };
}
