/**
 * @module
 * The app's one step around every request, ahead of telemetry, server actions and routes: the
 * request's nonce, id and app scope; what answers ahead of the app (static files, earlier builds'
 * assets, the build's route); the deadline and the body budget around the app's own answer (and,
 * last, the form state's restore when no telemetry middleware must come first); the answer
 * compressed; any value thrown that Hono's `onError` does not take (`throw "oops"`) answered like
 * an error; the security headers; the event streams made for the request and not sent ended; the
 * request's log line (and a refusal's over a rate limit). Each concern keeps its module
 * (`security.ts`, `static.ts`, `deadline.ts`, `bodies.ts`, `compression.ts`, `event_stream.ts`,
 * `request_log.ts`, `actions/form_state.ts`) and is a plain call here.
 *
 * One step rather than a middleware each: a hop through Hono's compose costs a dispatch, a closure
 * and two promises per request even where the middleware does nothing, and with 50 requests in
 * flight every suspended frame is one more object the garbage collector traces (the chain of six
 * such hops cost about a tenth of a page's CPU, docs/performance.md).
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import type { BodyGuard } from "./bodies.ts";
import { compressResponse } from "./compression.ts";
import { type DeadlineClock, withinDeadline } from "./deadline.ts";
import { settleStreams } from "./event_stream.ts";
import { internalsOf } from "./internals.ts";
import { logRefused, logRequest } from "./request_log.ts";
import type { AppScope } from "./scope.ts";
import { requestIdOf, secureRequest, secureResponse } from "./security.ts";
import type { Telemetry } from "./telemetry.ts";

export interface FrameSetup {
  /** The CSP's text around the nonce (`cspAround`). */
  csp: readonly [string, string];
  /** One JSON line per request (`AppOptions.logRequests`). */
  logRequests: boolean;
  /** The ids of a request's span, for its line (`Telemetry.requestIds`). */
  requestIds?: Telemetry["requestIds"];
  /**
   * What answers the request ahead of the app (a static file, say) - served as it is: not
   * compressed, no deadline - or undefined for the app to answer it. A lookup: called for every
   * request.
   */
  ahead(c: Context): MiddlewareHandler | undefined;
  /** Whether answers are compressed (`AppOptions.compress`). */
  compress: boolean;
  /** The requests' deadlines. */
  clock: DeadlineClock;
  /** The body budget's guard (`bodies.ts`). */
  guardBody: BodyGuard;
  /** What the request's code reads of the app (`scope.ts`). */
  scope: AppScope;
  /** The answer to a thrown value, as the app's `onError` gives it. */
  answerError(c: Context, error: unknown): Promise<Response>;
  /** The last step before Hono's next one, as a middleware (the form state's restore). */
  inner?: MiddlewareHandler;
}

/** Seconds a refused request is told to wait: another instance is serving meanwhile. */
const STOPPING_RETRY_S = "1";

/** The answer to a request that came after the stop let go of KV: this connection ends with it. */
function stoppingAnswer(): Response {
  return new Response("Service Unavailable: the server is stopping", {
    status: 503,
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "retry-after": STOPPING_RETRY_S,
      "connection": "close",
    },
  });
}

/** The step, as one Hono middleware mounted first (`createApp`). */
export function requestFrame(setup: FrameSetup): MiddlewareHandler {
  const { csp, logRequests, ahead, compress, clock, guardBody, scope, answerError, inner } = setup;

  /** The app's own answer: within the deadline and the body budget, then compressed. */
  async function answer(c: Context, next: Next): Promise<void> {
    try {
      const deadline = clock.start();
      if (deadline) internalsOf(c).deadline = deadline;
      const guard = guardBody(c);
      if (guard instanceof Response) {
        deadline?.clear();
        c.res = guard;
      } else {
        try {
          // Until the response (a page: its shell) is ready; what streams after has its own.
          await withinDeadline(inner ? inner(c, next) : next(), deadline);
        } finally {
          deadline?.clear();
          guard?.();
        }
      }
    } catch (error) {
      // The deadline passed, or a value Hono's `onError` does not take was thrown below
      // (`throw "oops"`): answered as `onError` answers errors, then compressed like any answer.
      c.res = await answerError(c, error);
    }
    const compressing = compress ? compressResponse(c) : undefined;
    if (compressing) await compressing;
  }

  return async function frame(c, next) {
    const start = logRequests ? performance.now() : 0;
    if (scope.requests.shut) {
      // The stop let go of KV (`App.stop`): a clear refusal, which a load balancer takes elsewhere.
      c.res = stoppingAnswer();
      const id = requestIdOf(c.req.raw);
      logRefused(scope.refusals, "stopping", c.req.method, c.req.path, STOPPING_RETRY_S, id);
      return;
    }
    // In flight until its answer is ready (a page's render counts on: `in_flight.ts`).
    scope.requests.enter();
    try {
      secureRequest(c, csp);
      internalsOf(c).appScope = scope;
      try {
        const early = ahead(c);
        if (!early) await answer(c, next);
        else {
          const res = await early(c, () => answer(c, next));
          if (res && !c.finalized) c.res = res;
        }
      } catch (error) {
        // What failed ahead of the app (a static file) or in compressing the answer.
        c.res = await answerError(c, error);
      }
      secureResponse(c);
      // The answer is final: an event stream made for the request and not in it ends now.
      settleStreams(c);
      if (logRequests) {
        const { method, path } = c.req;
        const id = internalsOf(c).requestId;
        logRequest(method, path, c.res.status, start, id, setup.requestIds?.(c));
      }
    } finally {
      const sent = internalsOf(c).ownBody &&
        (c.env as Deno.ServeHandlerInfo | undefined)?.completed;
      // `completed` rejects when the client left before the end: over all the same.
      if (sent) sent.then(scope.requests.leave, scope.requests.leave);
      else scope.requests.leave();
    }
    if (c.res.status === 429) {
      const { method, path } = c.req;
      const retryAfter = c.res.headers.get("retry-after");
      logRefused(
        scope.refusals,
        "rate limited",
        method,
        path,
        retryAfter,
        internalsOf(c).requestId,
      );
    }
  };
}
