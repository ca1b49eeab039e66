/**
 * @module
 * The app's `Telemetry` when Deno's OpenTelemetry traces the process: Deno makes each request's
 * server span, the client span of each outgoing `fetch` (with `traceparent`) and exports console
 * output as log records carrying the ids of the span they were written in. The app adds the route
 * to the server span's name (a page cache hit's too, answered ahead of the middleware), child spans
 * for render, actions and middleware, and a failure's ids on its JSON line, written in the
 * request's context (and a request's on its `logRequests` line). An error tracker (Sentry) plugs in
 * as a `Reporter`: it only reports, on the same trace, and makes no span of its own.
 */
import { context, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Context, Hono } from "hono";
import { isNotFoundRoute } from "../errors/not_found.ts";
import type { Assets } from "../server/manifest.ts";
import type { Telemetry } from "../server/telemetry.ts";
import {
  DIGEST_ATTRIBUTE,
  nameAfterRoute,
  requestContext,
  requestHit,
  requestSpan,
  responded,
  sampled,
  streamedFact,
  tracer,
} from "./request_span.ts";
import { internalsOf } from "../server/internals.ts";
import { jobContext, jobSpan } from "./job_span.ts";

/** What an error tracker adds to Deno's tracing. */
export interface Reporter {
  routes?(app: Hono): void;
  /**
   * Reports a failure (of the request `c`, or of none), called in the request's trace context and
   * never for the not-found page; returns the event's id (`eventId` when given). `job`: the
   * background job that failed, for a failure of no request.
   */
  capture(
    error: unknown,
    digest: string,
    c?: Context,
    eventId?: string,
    job?: string,
  ): string | null;
  /** The page's part, from the request's span: HTML's bytes (`Telemetry.head`). */
  head?(c: Context, span: Span | undefined, assets: Assets): Uint8Array | undefined;
  connectSources?: string[];
  flush(timeoutMs: number): Promise<void>;
}

export function otelTelemetry(reporter?: Reporter): Telemetry {
  const head = reporter?.head?.bind(reporter);
  return {
    routes: reporter?.routes?.bind(reporter),
    middleware: requestSpan,
    hit: requestHit,
    span: childSpan,
    within,
    jobContext,
    job: jobSpan,
    captureFailure(error, digest, c, { send = true, eventId, job } = {}) {
      const span = c ? internalsOf(c).otelSpan : trace.getActiveSpan();
      if (c && span) markFailed(c, span, digest);
      // The job's span (`jobSpan`), as a request's is marked.
      else if (job !== undefined && sampled(span)) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute(DIGEST_ATTRIBUTE, digest);
      }
      const ids = span?.spanContext();
      return {
        trace_id: ids?.traceId ?? null,
        span_id: ids?.spanId ?? null,
        sentry_event_id: reporter && send ? report(reporter, error, digest, c, eventId, job) : null,
      };
    },
    sendsEvents: reporter !== undefined,
    requestIds(c) {
      // A failure's line names the same span (`captureFailure`): the one continuing a caller's
      // `sentry-trace`, where there is one; Deno's otherwise, also for what answers ahead of it.
      const ids = (c && internalsOf(c).otelSpan || trace.getActiveSpan())?.spanContext();
      return ids && { trace_id: ids.traceId, span_id: ids.spanId };
    },
    head: head && ((c, assets) => head(c, internalsOf(c).otelSpan, assets)),
    connectSources: reporter?.connectSources,
    flush: (timeoutMs) => reporter?.flush(timeoutMs) ?? Promise.resolve(),
  };
}

/** The reporter's event: in the request's trace context, none for the not-found page. */
function report(
  reporter: Reporter,
  error: unknown,
  digest: string,
  c?: Context,
  eventId?: string,
  job?: string,
): string | null {
  if (!c) return reporter.capture(error, digest, undefined, undefined, job);
  if (isNotFoundRoute(c)) return null;
  return within(c, () => reporter.capture(error, digest, c, eventId));
}

/**
 * A child span of the active one, ended when `work` returns or its promise settles. None under a
 * span that is not sampled: Deno would record and end it all the same, for nothing to export.
 */
function childSpan<T>(name: string, work: () => T): T {
  if (!sampled(trace.getActiveSpan())) return work();
  return tracer.startActiveSpan(name, (span) => {
    let result: T;
    try {
      result = work();
    } catch (error) {
      span.end();
      throw error;
    }
    // The caller handles the promise's outcome; this only ends the span with it.
    if (result instanceof Promise) result.then(() => span.end(), () => span.end());
    else span.end();
    return result;
  });
}

function within<T>(c: Context, work: () => T): T {
  const ctx = requestContext(c);
  return ctx ? context.with(ctx, work) : work();
}

/**
 * The digest on the request's span, or on a child of it once the span has ended. A span still
 * open is named after its route now: the failure's answer may go out before the route's work ends.
 */
function markFailed(c: Context, span: Span, digest: string): void {
  if (!sampled(span)) return;
  if (responded(c)) return streamedFact(c, span, { [DIGEST_ATTRIBUTE]: digest }, true);
  nameAfterRoute(c, span);
  span.setAttribute(DIGEST_ATTRIBUTE, digest);
}
