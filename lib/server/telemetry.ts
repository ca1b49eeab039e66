/**
 * @module
 * What the core asks of telemetry: the one seam between the request pipeline and whatever records
 * errors and traces (Sentry, OpenTelemetry). The core calls these and imports no SDK; a plugin
 * implements them, and with none configured nothing of any SDK is loaded.
 */
import type { Assets } from "./manifest.ts";
import type { Context, HonoApp, Middleware } from "./types.ts";

/**
 * What a failure's JSON log line links to: the trace, the span and the error event a telemetry
 * plugin recorded; `null` where it has nothing to say.
 *
 * @example
 * ```ts
 * import type { FailureLinks } from "shell/server";
 *
 * const none: FailureLinks = { trace_id: null, span_id: null, sentry_event_id: null };
 * ```
 * @see docs/failures.md - Digests and the log line
 */
export interface FailureLinks {
  /** The request's trace (32 hex digits). */
  trace_id: string | null;
  /** The span the failure happened in (16 hex digits). */
  span_id: string | null;
  /** The error event sent for it. */
  sentry_event_id: string | null;
}

/**
 * What a request's `logRequests` line links to (`Telemetry.requestIds`): its trace and its span.
 *
 * @example
 * ```ts
 * import type { TraceIds } from "shell/server";
 *
 * const ids: TraceIds = { trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", span_id: "00f067aa0ba902b7" };
 * ```
 * @see docs/telemetry.md - One trace: a log line, an event, a span
 */
export interface TraceIds {
  /** The request's trace (32 hex digits). */
  trace_id: string;
  /** The request's span (16 hex digits). */
  span_id: string;
}

/**
 * What the app asks of a telemetry plugin (`AppOptions.telemetry`): the one seam between the
 * request pipeline and whatever records errors and traces. The shipped one is Sentry with Deno's
 * OpenTelemetry (`lib/sentry/`); with none, no SDK is loaded. Only `captureFailure` and `flush` are
 * required.
 *
 * @example
 * ```ts
 * import { createApp, type Telemetry } from "shell/server";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * // Failures to stderr, nothing else.
 * const telemetry: Telemetry = {
 *   captureFailure(error, digest) {
 *     console.error(digest, error);
 *     return { trace_id: null, span_id: null, sentry_event_id: null };
 *   },
 *   flush: () => Promise.resolve(),
 * };
 * const app = createApp(manifest, { root: Deno.cwd(), telemetry });
 * ```
 * @see docs/telemetry.md
 */
export interface Telemetry {
  /** Routes of the plugin's own (Sentry's tunnel), mounted before the app's and outside tracing. */
  routes?(app: HonoApp): void;
  /**
   * Wraps every request after static files: a request span, say. Reads the request's route
   * (`internalsOf(c).route`) once set.
   */
  middleware?: Middleware;
  /**
   * Records a request the page cache answers ahead of the app's middleware (a fresh hit of a
   * route with no `_middleware.ts`, docs/caching.md) as `middleware` would have recorded it:
   * `route` is the route's pattern (`/blog/:slug`). Called before the response is made, in the
   * request's context; returns false when it cannot record the request there, which then goes
   * through the whole app. A plugin with `middleware` and no `hit` keeps every hit on the whole
   * app.
   */
  hit?(req: Request, route: string): boolean;
  /**
   * Runs `work` as a child span named `name` (render, an action, a middleware), ended when `work`
   * returns or, for a promise, settles. Absent, the core calls `work` as it is: no wrapper at all.
   */
  span?<T>(name: string, work: () => T): T;
  /**
   * Runs `work` in the trace context of the request `c`, so that what it logs is linked to the
   * request's span - also after the response went out (a failure in a streamed boundary).
   */
  within?<T>(c: Context, work: () => T): T;
  /**
   * Reports a failure: of the request `c`, or of no request (an unhandled rejection). Never
   * called for the not-found page's requests' reporting decisions: `isNotFoundRoute(c)` tells.
   * With `send: false` (a repeat of a failure sent a moment ago, `Failures.repeating`), only the
   * links: nothing is sent, and `sentry_event_id` is `null`. With `eventId`, the event is sent
   * under that id (32 hex digits): `repeating` chooses it first, so that other processes' repeats
   * can name the event before it is sent. With `job`, the failure is of that background job
   * (`lib/kv/jobs/`), not of a request: its event says so.
   */
  captureFailure(
    error: unknown,
    digest: string,
    c?: Context,
    options?: { send?: boolean; eventId?: string; job?: string },
  ): FailureLinks;
  /**
   * Whether `captureFailure` sends error events, under the `eventId` it is given: only then does
   * `Failures.repeating` choose a failure's id first and share it (KV) for repeats to name.
   * Absent, as for Deno's OpenTelemetry alone: no event is sent, so no repeat names one.
   */
  sendsEvents?: boolean;
  /**
   * The trace context of the code enqueuing a background job (`traceparent`, as a header would
   * carry it), kept in the job's message for `job`. Absent, or undefined: the message carries none.
   */
  jobContext?(): Record<string, string> | undefined;
  /**
   * Runs a try of a background job (`lib/kv/jobs/`) as a span of its own, in the trace of the
   * code that enqueued it (`run.carried`, from `jobContext`: a request's span, a cron's
   * `deno.cron`) or, with none, in a trace of its own; a failure captured while it runs is linked
   * to it. Absent, the job's try runs as it is.
   */
  job?(run: JobRun, work: () => Promise<void>): Promise<void>;
  /**
   * The ids of a request's span for its `logRequests` line: of `c`, or, with none, of the request
   * whose context is active (a page cache hit answered ahead of the middleware). Undefined: no
   * span. Asked only when the app writes a line per request.
   */
  requestIds?(c?: Context): TraceIds | undefined;
  /**
   * HTML's bytes for a page with islands (trace meta tags, the browser SDK's settings), written once into
   * its stream, right before the island runtime's script: in `<head>` when an island renders in the
   * shell (in a Suspense fallback too), before the boundary of the first one streamed later.
   * Asked only then: a page without runs no SDK to read it. `assets`: the build's chunks (the
   * browser SDK's, `assets.sentry`). Nothing escapes what it returns: attribute values must be
   * escaped by it.
   */
  head?(c: Context, assets: Assets): Uint8Array | undefined;
  /** Origins the browser sends telemetry to, for the CSP's `connect-src`. */
  connectSources?: string[];
  /** Sends what is pending, waiting at most `timeoutMs`. */
  flush(timeoutMs: number): Promise<void>;
}

/**
 * A try of a background job, as `Telemetry.job` records it.
 *
 * @example
 * ```ts
 * import type { JobRun } from "shell/server";
 *
 * // The second try of a reply keyed by a webhook's delivery id.
 * const run: JobRun = { name: "sendReply", attempt: 1, key: "delivery-8f2c" };
 * ```
 * @see docs/telemetry.md - Background jobs
 */
export interface JobRun {
  /** The job's name in `defineJobs`. */
  name: string;
  /** Tries before this one. */
  attempt: number;
  /** The key it was enqueued with, if any. */
  key?: string;
  /** The trace context `jobContext` gave as it was enqueued. */
  carried?: Record<string, string>;
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
