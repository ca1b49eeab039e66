/**
 * @module
 * The server span of a request, as Deno's OpenTelemetry makes it (`OTEL_DENO=true`, Deno Deploy):
 * Deno starts it before the app runs - continuing a `traceparent` - and ends it as soon as the app
 * returns the Response, before a streamed body has gone out. This middleware names it after what
 * answered (`GET /blog/:slug`, with `http.route`), marks the not-found page (`app.not_found`) so it
 * can be filtered, and keeps it on the request for what happens outside the request's async
 * context: a failure in a streamed boundary, written down after the span ended, becomes a child
 * span dated back to when the response went out.
 *
 * A request with `sentry-trace` but no `traceparent` (a Sentry SDK that sends no W3C header) is one
 * Deno cannot continue: it starts a trace of its own. The request's work then runs under a second
 * server span made here, in the caller's trace and linked to Deno's both ways.
 *
 * A page cache hit answered ahead of the middleware gets its span named the same way, without the
 * middleware (`requestHit`, the app's `Telemetry.hit`).
 */
import {
  type Context as OtelContext,
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { Context, MiddlewareHandler, Next } from "hono";
import type {} from "../actions/endpoint.ts"; // `internalsOf(c).action`
import { ACTION_PATH } from "../shared/action_wire.ts";
import { isNotFoundRoute } from "../errors/not_found.ts";
import { internalsOf } from "../server/internals.ts";
import { loggedMethod, loggedPath } from "../server/log.ts";

declare module "../server/internals.ts" {
  interface Internals {
    /** The request's server span: Deno's, or the one continuing a `sentry-trace`. */
    otelSpan: Span;
    /** When the response went back to Deno, which ended its span then (ms since the epoch). */
    otelRespondedAt: number;
  }
}

export const tracer = trace.getTracer("app");

/** Marks a not-found request's spans; nothing can drop a trace once its first span is out. */
export const NOT_FOUND_ATTRIBUTE = "app.not_found";
/** The digest of a failure (the JSON line's and the failure screen's), on the failed request. */
export const DIGEST_ATTRIBUTE = "app.digest";
/**
 * Every action is one route, `/_action/:id`: the name stays low-cardinality like any route's, and
 * the action itself is an attribute and the name of the child span that runs it.
 */
export const ACTION_ROUTE = `${ACTION_PATH}/:id`;
export const ACTION_ATTRIBUTE = "app.action";

const SENTRY_TRACE = /^\s*([0-9a-f]{32})-([0-9a-f]{16})(?:-([01]))?\s*$/;

/** Where a request's context keeps its `baggage` header, for the Sentry DSC it may hold. */
export const INCOMING_BAGGAGE = Symbol.for("app.incoming_baggage");

/**
 * Whether Deno extracts a caller's `baggage` into the request's context itself: not under the
 * launcher, which leaves Deno's baggage propagator out (`otel/env.ts`: it threw on a value it
 * could not decode, before the app, and the request was never answered). Asked once.
 */
let denoExtractsBaggage: boolean | undefined;

/** Not async: a request that is not sampled goes on with no promise or frame of its own. */
export const requestSpan: MiddlewareHandler = function requestSpan(c, next) {
  const denoSpan = trace.getActiveSpan();
  if (!denoSpan) return next(); // Deno traces every request; nothing to name otherwise
  denoExtractsBaggage ??= propagation.fields().includes("baggage");
  const baggage = denoExtractsBaggage ? null : c.req.raw.headers.get("baggage");
  if (!baggage) return spanned(c, next, denoSpan);
  // Kept as sent, for `activeBaggageHeader`: only a request that carries one pays for a context.
  const kept = context.active().setValue(INCOMING_BAGGAGE, baggage);
  return context.with(kept, () => spanned(c, next, denoSpan));
};

/** The request's work under Deno's span, or under one continuing a caller's `sentry-trace`. */
function spanned(c: Context, next: Next, denoSpan: Span): Promise<void> {
  const headers = c.req.raw.headers;
  if (headers.has("sentry-trace") && !headers.has("traceparent")) {
    const continued = continueSentryTrace(c, headers.get("sentry-trace")!, denoSpan);
    if (continued) return runUnder(c, next, continued);
  }
  internalsOf(c).otelSpan = denoSpan;
  // Not sampled: its ids still link the failures and logs of the request; naming it is wasted.
  if (!sampled(denoSpan)) return next();
  return named(c, next, denoSpan);
}

/** A sampled request's span, named after what answered once that is known. */
async function named(c: Context, next: Next, span: Span): Promise<void> {
  try {
    await next();
  } finally {
    nameAfterRoute(c, span);
    respond(c, span);
  }
}

/**
 * A request answered ahead of the middleware (a page cache hit, `Telemetry.hit`): its span named
 * as `requestSpan` names a page's - `GET /route` with `http.route` - when it is sampled, and left
 * as it is otherwise. A `sentry-trace` without `traceparent` goes through the whole app, where
 * `requestSpan` continues the caller's trace (false).
 */
export function requestHit(req: Request, route: string): boolean {
  const denoSpan = trace.getActiveSpan();
  if (!denoSpan) return true;
  const { headers } = req;
  if (headers.has("sentry-trace") && !headers.has("traceparent")) return false;
  if (sampled(denoSpan)) nameSpan(denoSpan, req.method, route);
  return true;
}

/** Whether the span goes out: Deno records spans that are not sampled as well, for nothing. */
export function sampled(span: Span | undefined): span is Span {
  return span !== undefined && (span.spanContext().traceFlags & 1) === 1;
}

/** The request's work under the span continuing the caller's trace, which ends when Deno's does. */
async function runUnder(c: Context, next: Next, span: Span): Promise<void> {
  internalsOf(c).otelSpan = span;
  let ended = false;
  const end = (status: number) => {
    if (ended) return;
    ended = true;
    nameAfterRoute(c, span);
    span.setAttribute("http.response.status_code", status);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    respond(c, span);
  };
  // Past its deadline the request is answered (500) further out while `next()` still waits,
  // perhaps for ever: the span ends with that answer, once its failure is recorded on it.
  internalsOf(c).deadline?.onExpire(() => setTimeout(() => end(500)));
  try {
    await context.with(trace.setSpan(context.active(), span), next);
  } finally {
    end(c.res.status);
  }
}

/**
 * A server span in the caller's trace, child of its span; undefined if the header is no trace
 * (ids of all zeros included).
 */
function continueSentryTrace(c: Context, header: string, denoSpan: Span): Span | undefined {
  const match = header.match(SENTRY_TRACE);
  if (!match) return undefined;
  const [, traceId, spanId, sampled] = match;
  // No sampled flag: the caller left the decision to us; Deno's sampler has made it.
  const flags = sampled === undefined ? denoSpan.spanContext().traceFlags & 1 : Number(sampled);
  const caller = { traceId, spanId, traceFlags: flags, isRemote: true };
  // All zeros is no trace (W3C): Deno's tracer threw on it, and every such request was a 500.
  if (!isSpanContextValid(caller)) return undefined;
  const parent = trace.setSpanContext(context.active(), caller);
  const span = tracer.startSpan(loggedMethod(c.req.method), {
    kind: SpanKind.SERVER,
    attributes: {
      "http.request.method": loggedMethod(c.req.method),
      "url.path": loggedPath(c.req.path),
    },
    links: [{ context: denoSpan.spanContext() }],
  }, parent);
  denoSpan.addLink({ context: span.spanContext() });
  return span;
}

/**
 * Names the request's span after what answered. Also called when a failure is captured: a request
 * past its deadline is answered while the route's own work still waits, so `named`'s `finally`
 * comes after Deno ended the span, if ever.
 */
export function nameAfterRoute(c: Context, span: Span): void {
  const action = internalsOf(c).action;
  const route = action ? ACTION_ROUTE : internalsOf(c).route;
  if (route) nameSpan(span, c.req.method, route);
  if (action) span.setAttribute(ACTION_ATTRIBUTE, action.name);
  if (isNotFoundRoute(c)) span.setAttribute(NOT_FOUND_ATTRIBUTE, true);
}

function nameSpan(span: Span, method: string, route: string): void {
  span.updateName(`${loggedMethod(method)} ${route}`);
  span.setAttribute("http.route", route);
}

/**
 * The response goes back to Deno now, which ends the span. A page whose `notFound()` comes from a
 * boundary after its shell is marked once its body is sent (`completed`, where Deno says when).
 */
function respond(c: Context, span: Span): void {
  internalsOf(c).otelRespondedAt = Date.now();
  if (isNotFoundRoute(c)) return;
  const completed = (c.env as Deno.ServeHandlerInfo | undefined)?.completed;
  const check = () => {
    if (isNotFoundRoute(c)) streamedFact(c, span, { [NOT_FOUND_ATTRIBUTE]: true });
  };
  completed?.then(check, check);
}

/**
 * What became known after the request's span ended: a child span `response.stream`, from when the
 * response went out until now, carrying it.
 */
export function streamedFact(
  c: Context,
  span: Span,
  attributes: Record<string, string | boolean>,
  failed = false,
): void {
  const fact = tracer.startSpan("response.stream", {
    startTime: internalsOf(c).otelRespondedAt,
    attributes,
  }, trace.setSpan(ROOT_CONTEXT, span));
  if (failed) fact.setStatus({ code: SpanStatusCode.ERROR });
  fact.end();
}

/** Whether the request's span has ended: its response went back to Deno. */
export function responded(c: Context): boolean {
  return internalsOf(c).otelRespondedAt !== undefined;
}

/** The request's trace context, its incoming `baggage` with it, for work outside its context. */
export function requestContext(c: Context): OtelContext | undefined {
  const span = internalsOf(c).otelSpan;
  if (!span) return undefined;
  const baggage = c.req.header("baggage");
  const ctx = trace.setSpan(ROOT_CONTEXT, span);
  return baggage ? ctx.setValue(INCOMING_BAGGAGE, baggage) : ctx;
}

/**
 * The request's `baggage` header, from the active context: as the request brought it (outside its
 * async context, or inside it when Deno does not extract it: `requestSpan`), or as Deno extracted
 * it into the request's context.
 */
export function activeBaggageHeader(): string | undefined {
  const active = context.active();
  const kept = active.getValue(INCOMING_BAGGAGE) as string | undefined;
  if (kept !== undefined) return kept;
  return propagation.getBaggage(active)?.getAllEntries()
    .map(([key, entry]) => `${key}=${encodeURIComponent(entry.value)}`).join(",");
}
