/**
 * @module
 * The Hono middleware that gives every request an `http.server` transaction named by its route
 * pattern (`GET /blog/:slug`), continuing the caller's trace from `sentry-trace`/`baggage` or a
 * W3C `traceparent`. Our own middleware rather than the SDK's `Deno.serve` patch, so it works the
 * same under `Deno.serve`, `deno serve --parallel` and Deno Deploy. The span stays open until the
 * streamed body ends, so a failure inside a Suspense boundary still lands in the transaction.
 */
import {
  continueTrace,
  type Scope,
  SEMANTIC_ATTRIBUTE_SENTRY_OP,
  SEMANTIC_ATTRIBUTE_SENTRY_ORIGIN,
  SEMANTIC_ATTRIBUTE_SENTRY_SOURCE,
  setHttpStatus,
  type Span,
  startSpanManual,
  winterCGRequestToRequestData,
  withIsolationScope,
} from "@sentry/core";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { isNotFoundRoute } from "../not_found.ts";

/** What a request's failure is captured under: its transaction and its isolation scope. */
export interface RequestTrace {
  /** The matched route's pattern, e.g. `/blog/:slug`. */
  route: string;
  span: Span;
  isolationScope: Scope;
}

declare module "hono" {
  interface ContextVariableMap {
    sentryTrace: RequestTrace;
  }
}

export function requestTraceOf(c: Context): RequestTrace | undefined {
  return c.get("sentryTrace");
}

/** The span attribute `beforeSendTransaction` drops transactions by. */
export const NOT_FOUND_ATTRIBUTE = "app.not_found";

export function sentryTracing(): MiddlewareHandler {
  return function sentryTracing(c, next) {
    const req = c.req.raw;
    const route = routePattern(c);
    return withIsolationScope((isolationScope) => {
      isolationScope.setSDKProcessingMetadata({
        normalizedRequest: winterCGRequestToRequestData(req),
      });
      return continueTrace(incomingTrace(req.headers), () =>
        startSpanManual({
          name: `${req.method} ${route}`,
          op: "http.server",
          attributes: {
            [SEMANTIC_ATTRIBUTE_SENTRY_ORIGIN]: "auto.http.hono",
            [SEMANTIC_ATTRIBUTE_SENTRY_SOURCE]: "route",
            [SEMANTIC_ATTRIBUTE_SENTRY_OP]: "http.server",
            "http.request.method": req.method,
            "url.path": c.req.path,
          },
        }, async (span) => {
          c.set("sentryTrace", { route, span, isolationScope });
          try {
            await next(); // Hono's onError turns a thrown Error into c.res
          } catch (thrown) {
            // Anything else thrown is answered further out (`catchThrownValues`), as a 500.
            setHttpStatus(span, 500);
            span.end();
            throw thrown;
          }
          setHttpStatus(span, c.res.status);
          if (isNotFoundRoute(c)) span.setAttribute(NOT_FOUND_ATTRIBUTE, true);
          c.res = endWithBody(c.res, span, (c.env as Deno.ServeHandlerInfo | undefined)?.completed);
        }));
    });
  };
}

/**
 * The pattern of the route the router matched: the last matched handler is the route's, unless
 * only the app-wide middleware matched (an unknown URL, reported as not-found and dropped).
 */
function routePattern(c: Context): string {
  const route = matchedRoutes(c).at(-1);
  return route && route.path !== "/*" ? route.path : c.req.path;
}

/** `sentry-trace`/`baggage` when present, else a W3C `traceparent` in the same shape. */
function incomingTrace(headers: Headers) {
  const sentryTrace = headers.get("sentry-trace") ?? fromTraceparent(headers.get("traceparent"));
  return { sentryTrace, baggage: headers.get("baggage") };
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * W3C `00-{trace}-{span}-{flags}` as `{trace}-{span}[-1]`. A set sampled flag is kept; an unset one
 * leaves the decision to our sampler, since most non-Sentry callers never set it.
 */
function fromTraceparent(traceparent: string | null): string | undefined {
  const match = traceparent?.trim().match(TRACEPARENT);
  if (!match) return undefined;
  const [, traceId, spanId, flags] = match;
  return parseInt(flags, 16) & 1 ? `${traceId}-${spanId}-1` : `${traceId}-${spanId}`;
}

/**
 * Ends `span` once the response body has been sent or abandoned, or now if there is none. Where
 * `Deno.serve` tells when the response is delivered (`completed`), that is free; elsewhere the
 * body is passed through a stream that notices its end.
 */
function endWithBody(res: Response, span: Span, completed?: Promise<void>): Response {
  if (!res.body) {
    span.end();
    return res;
  }
  if (completed) {
    const end = () => span.end();
    completed.then(end, end);
    return res;
  }
  let ended = false;
  const end = () => {
    if (!ended) span.end();
    ended = true;
  };
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  return new Response(body, res);
}
