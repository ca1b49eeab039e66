/**
 * @module
 * What the core asks of telemetry: the one seam between the request pipeline and whatever records
 * errors and traces (Sentry, OpenTelemetry). The core calls these and imports no SDK; a plugin
 * implements them, and with none configured nothing of any SDK is loaded.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import type { ReactNode } from "react";
import type { Middleware } from "./types.ts";

/** What a failure's JSON log line links to; `null` where a plugin has nothing to say. */
export interface FailureLinks {
  trace_id: string | null;
  span_id: string | null;
  sentry_event_id: string | null;
}

export interface Telemetry {
  /** Routes of the plugin's own (Sentry's tunnel), mounted before the app's and outside tracing. */
  routes?(app: Hono): void;
  /** Wraps every request after static files: a request span, say. Reads `c.var.route` once set. */
  middleware?: MiddlewareHandler;
  /**
   * Runs `work` as a child span named `name` (render, an action, a middleware), ended when `work`
   * returns or, for a promise, settles. Absent, the core calls `work` as it is: no wrapper at all.
   */
  span?<T>(name: string, work: () => T): T;
  /**
   * Runs `work` in the trace context of the request `c`, so that what it logs is linked to the
   * request's span — also after the response went out (a failure in a streamed boundary).
   */
  within?<T>(c: Context, work: () => T): T;
  /**
   * Reports a failure: of the request `c`, or of no request (an unhandled rejection). Never
   * called for the not-found page's requests' reporting decisions: `isNotFoundRoute(c)` tells.
   */
  captureFailure(error: unknown, digest: string, c?: Context): FailureLinks;
  /** Elements for a page's `<head>`: trace meta tags, the browser SDK's settings. */
  head?(c: Context): ReactNode;
  /** Origins the browser sends telemetry to, for the CSP's `connect-src`. */
  connectSources?: string[];
  /** Sends what is pending, waiting at most `timeoutMs`. */
  flush(timeoutMs: number): Promise<void>;
}

export const NO_LINKS: FailureLinks = { trace_id: null, span_id: null, sentry_event_id: null };

/**
 * Each middleware as a child span named after its function (`middleware basicAuth`), wrapped once
 * when the app is built; with no `span` the list is returned as it is.
 */
export function tracedMiddleware(middlewares: Middleware[], telemetry?: Telemetry): Middleware[] {
  const span = telemetry?.span?.bind(telemetry);
  if (!span) return middlewares;
  return middlewares.map((middleware) => {
    const name = `middleware ${middleware.name || "anonymous"}`;
    return (c, next) => span(name, () => middleware(c, next));
  });
}
