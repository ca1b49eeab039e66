/**
 * @module
 * Keeps one trace from the browser to the server before the Sentry SDK has loaded (it loads late,
 * off the critical path): until then our own calls (server actions) carry the page's trace from
 * its `sentry-trace`/`baggage` meta tags. Once the SDK instruments `fetch`, it sets the headers.
 */

let sdkPropagates = false;

/** Called by the SDK chunk once its fetch instrumentation is in place. */
export function sdkTakesOverFetch(): void {
  sdkPropagates = true;
}

export function pageTraceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  if (sdkPropagates) return headers;
  for (const name of ["sentry-trace", "baggage"]) {
    const content = document.querySelector(`meta[name="${name}"]`)?.getAttribute("content");
    if (content) headers[name] = content;
  }
  return headers;
}
