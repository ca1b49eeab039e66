/**
 * @module
 * The Hono middleware that gives every request an `http.server` transaction named by its route
 * pattern (`GET /blog/:slug`), continuing the caller's trace from `sentry-trace`/`baggage` or a
 * W3C `traceparent`. Our own middleware rather than the SDK's `Deno.serve` patch, so it works the
 * same under `Deno.serve`, `deno serve --parallel` and Deno Deploy. The span stays open until the
 * streamed body ends, so a failure inside a Suspense boundary still lands in the transaction.
 */
import type { Scope, Span } from "@sentry/core";
import {
  continueTrace,
  SEMANTIC_ATTRIBUTE_SENTRY_OP,
  SEMANTIC_ATTRIBUTE_SENTRY_ORIGIN,
  SEMANTIC_ATTRIBUTE_SENTRY_SOURCE,
  setHttpStatus,
  startSpanManual,
  withIsolationScope,
} from "./sdk_tracing.ts";
import { requestData } from "./request_data.ts";
import type { Context, MiddlewareHandler } from "hono";
import type {} from "../actions/endpoint.ts"; // `internalsOf(c).action`
import { isNotFoundRoute } from "../errors/not_found.ts";
import { untrustedBaggage } from "./sampling.ts";
import { internalsOf } from "../server/internals.ts";
import { loggedMethod, loggedPath } from "../server/log.ts";

/** What a request's failure is captured under: its transaction and its isolation scope. */
export interface RequestTrace {
  /** The route answering the request (`/blog/:slug`), once the router chose it. */
  route?: string;
  span: Span;
  isolationScope: Scope;
}

declare module "../server/internals.ts" {
  interface Internals {
    sentryTrace: RequestTrace;
  }
}

/**
 * The request's trace, its transaction named after the route if the router chose one by now: the
 * page's baggage and a failure read it through here, before the transaction ends.
 */
export function requestTraceOf(c: Context): RequestTrace | undefined {
  const trace = internalsOf(c).sentryTrace;
  if (trace) nameAfterRoute(c, trace);
  return trace;
}

/**
 * The transaction starts named by the URL; the router sets the route later
 * (`internalsOf(c).route`), and the action endpoint the action (`internalsOf(c).action`): `GET
 * /blog/:slug`, `action signUp`.
 */
function nameAfterRoute(c: Context, trace: RequestTrace): void {
  const action = internalsOf(c).action;
  const route = action ? `action ${action.name}` : internalsOf(c).route;
  if (!route || trace.route === route) return;
  trace.route = route;
  trace.span.updateName(action ? route : `${loggedMethod(c.req.method)} ${route}`);
  trace.span.setAttribute(SEMANTIC_ATTRIBUTE_SENTRY_SOURCE, action ? "component" : "route");
}

/** The span attribute `beforeSendTransaction` drops transactions by. */
export const NOT_FOUND_ATTRIBUTE = "app.not_found";

export function sentryTracing(): MiddlewareHandler {
  return function sentryTracing(c, next) {
    const req = c.req.raw;
    return withIsolationScope((isolationScope) => {
      const trace = () =>
        startSpanManual({
          // Until the router has chosen a route (`nameAfterRoute`); not-found keeps the URL. The
          // method and path clipped as log lines carry them: each as long as a client likes.
          name: `${loggedMethod(req.method)} ${loggedPath(c.req.path)}`,
          op: "http.server",
          attributes: {
            [SEMANTIC_ATTRIBUTE_SENTRY_ORIGIN]: "auto.http.hono",
            [SEMANTIC_ATTRIBUTE_SENTRY_SOURCE]: "url",
            [SEMANTIC_ATTRIBUTE_SENTRY_OP]: "http.server",
            "http.request.method": loggedMethod(req.method),
            "url.path": loggedPath(c.req.path),
          },
        }, async (span) => {
          // Only a transaction that is sent carries the request; a failure adds it when captured.
          if (span.isRecording()) attachRequest(isolationScope, req);
          const requestTrace: RequestTrace = { span, isolationScope };
          internalsOf(c).sentryTrace = requestTrace;
          // Past its deadline the request is answered (500) further out while `next()` still
          // waits, perhaps for ever: its transaction ends now, or it would never be sent.
          internalsOf(c).deadline?.onExpire(() => {
            nameAfterRoute(c, requestTrace);
            setHttpStatus(span, 500);
            span.end();
          });
          try {
            await next(); // Hono's onError turns a thrown Error into c.res
          } catch (thrown) {
            // Anything else thrown is answered further out (`catchThrownValues`), as a 500.
            setHttpStatus(span, 500);
            span.end();
            throw thrown;
          }
          nameAfterRoute(c, requestTrace);
          setHttpStatus(span, c.res.status);
          const end = () => {
            // Checked at the end: `notFound()` may yet come from a boundary that streams in.
            if (isNotFoundRoute(c)) span.setAttribute(NOT_FOUND_ATTRIBUTE, true);
            span.end();
          };
          const completed = (c.env as Deno.ServeHandlerInfo | undefined)?.completed;
          const res = endWithBody(c.res, end, completed);
          // Assigning `c.res` makes Hono copy the response: only when it really is another one.
          if (res !== c.res) c.res = res;
        });
      const incoming = incomingTrace(req.headers);
      // A first page view carries no trace to continue: no scope to make for one.
      return incoming.sentryTrace || incoming.baggage ? continueTrace(incoming, trace) : trace();
    });
  };
}

/** The request as Sentry's events show it (URL, method, headers). */
export function attachRequest(isolationScope: Scope, req: Request): void {
  isolationScope.setSDKProcessingMetadata({ normalizedRequest: requestData(req) });
}

/**
 * `sentry-trace`/`baggage` when present, else a W3C `traceparent` in the same shape; the caller's
 * sampling values are not taken (see `sampling.ts`).
 */
function incomingTrace(headers: Headers) {
  const sentryTrace = headers.get("sentry-trace") ?? fromTraceparent(headers.get("traceparent"));
  return { sentryTrace, baggage: untrustedBaggage(headers.get("baggage")) };
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
 * Calls `end` once the response body has been sent or abandoned, or now if there is none. Where
 * `Deno.serve` tells when the response is delivered (`completed`), that is free; elsewhere the
 * body is passed through a stream that notices its end.
 */
function endWithBody(res: Response, end: () => void, completed?: Promise<void>): Response {
  // `completed` first: reading `res.body` would turn a static body (an API route's JSON, say) into
  // a stream, off Deno's fast path.
  if (completed) {
    completed.then(end, end);
    return res;
  }
  if (!res.body) {
    end();
    return res;
  }
  let ended = false;
  const endOnce = () => {
    if (!ended) end();
    ended = true;
  };
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          endOnce();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        endOnce();
        controller.error(error);
      }
    },
    cancel(reason) {
      endOnce();
      return reader.cancel(reason);
    },
  });
  return new Response(body, res);
}
