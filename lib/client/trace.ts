/**
 * @module
 * Keeps one trace from the browser to the server before the Sentry SDK has loaded (it loads late,
 * off the critical path): until then our own calls (server actions) carry the page's trace from
 * its `sentry-trace`/`baggage` meta tags, and as a W3C `traceparent` too, the one header Deno's
 * OpenTelemetry continues by itself. Once the SDK instruments `fetch`, it sets the headers.
 */

let sdkPropagates = false;

/** Called by the SDK chunk once its fetch instrumentation is in place. */
export function sdkTakesOverFetch(): void {
  sdkPropagates = true;
}

const SENTRY_TRACE = /^([0-9a-f]{32})-([0-9a-f]{16})(?:-([01]))?$/;

export function pageTraceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  if (sdkPropagates) return headers;
  for (const name of ["sentry-trace", "baggage"]) {
    const content = document.querySelector(`meta[name="${name}"]`)?.getAttribute("content");
    if (content) headers[name] = content;
  }
  const [, traceId, spanId, sampled] = headers["sentry-trace"]?.match(SENTRY_TRACE) ?? [];
  if (traceId) headers.traceparent = `00-${traceId}-${spanId}-0${sampled === "1" ? 1 : 0}`;
  return headers;
}
