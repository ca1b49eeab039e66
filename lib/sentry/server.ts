/**
 * @module
 * The server SDK (`@sentry/deno`), started once from the settings, as the app's `Telemetry`.
 * Imported only when Sentry is configured (see `mod.ts`). It owns what leaves the process:
 * failures are captured here, once each, tagged with their digest; not-found transactions are
 * dropped before they are sent.
 */
import type { Event, Span } from "@sentry/core";
import { captureException, flush, globalHandlersIntegration } from "./sdk.ts";
import {
  getDefaultIntegrations,
  init,
  spanToBaggageHeader,
  spanToTraceHeader,
  withActiveSpan,
  withIsolationScope,
} from "./sdk_tracing.ts";
import type { Context } from "hono";
import { isNotFoundRoute } from "../errors/not_found.ts";
import type { FailureLinks, Telemetry } from "../server/telemetry.ts";
import { browserConnectSources, privateHosts, type SentryConfig } from "./config.ts";
import { outgoingFetchIntegration } from "./fetch.ts";
import { attachRequest, NOT_FOUND_ATTRIBUTE, requestTraceOf, sentryTracing } from "./middleware.ts";
import { type PageTrace, sentryHead } from "./page.ts";
import { tracesSampler } from "./sampling.ts";
import { scrubIntegration } from "./scrub.ts";
import { spotlightIntegration } from "./spotlight.ts";
import { timedTransport } from "./transport.ts";
import { mechanismOf } from "./mechanism.ts";
import { sentryTunnel } from "./tunnel.ts";
import { internalsOf } from "../server/internals.ts";
import { loggedMethod, loggedPath } from "../server/log.ts";

export function startSentry(config: SentryConfig): Telemetry {
  init({
    dsn: config.dsn,
    environment: config.environment,
    release: config.release,
    // A caller's "sampled" is followed only so far (`sampling.ts`).
    tracesSampler: tracesSampler(config.tracesSampleRate, config.tracesParentLimit),
    tracePropagationTargets: config.tracePropagationTargets,
    // Our middleware makes the request transactions (`sentryTracing`); the SDK's own `Deno.serve`
    // patch would make a second, URL-named one. `DenoHttp` stays: it installs the
    // AsyncLocalStorage context that keeps concurrent requests' scopes apart. Not `Breadcrumbs`:
    // a console line written outside a request's scope (at start-up, or a deadline's failure line,
    // written from the shared deadline timer) landed on every later event of every request, with
    // that request's path and error; our JSON lines are the log, and the spans show the fetches.
    defaultIntegrations: getDefaultIntegrations({})
      .filter((i) => i.name !== "DenoServe" && i.name !== "Breadcrumbs"),
    integrations: [
      // Its unhandled-rejection handler ends the process; the entry points keep the server alive
      // and report those through `captureFailure`.
      globalHandlersIntegration({ error: true, unhandledrejection: false }),
      outgoingFetchIntegration(privateHosts(config)),
      scrubIntegration(config.scrubFields),
      ...config.spotlight ? [spotlightIntegration(config.spotlight)] : [],
    ],
    beforeSendTransaction: (event) => isNotFoundTransaction(event) ? null : event,
    transport: timedTransport,
  });

  const head = sentryHead(config);
  return {
    routes(app) {
      if (config.tunnel && config.dsn) app.post(config.tunnel, sentryTunnel(config.dsn));
    },
    middleware: sentryTracing(),
    captureFailure: (error, digest, c, { send = true, eventId, job } = {}) =>
      c ? captureFailure(c, error, digest, send, eventId) : captureUnhandled(error, digest, job),
    sendsEvents: true,
    /** The page's part: none for the not-found page, so its browser sends nothing either. */
    head: (c: Context, assets) =>
      isNotFoundRoute(c) ? undefined : head(pageTraceOf(requestTraceOf(c)?.span), assets),
    connectSources: browserConnectSources(config),
    flush: async (timeoutMs) => {
      await flush(timeoutMs);
    },
  };
}

/**
 * Captures a server failure under its request's transaction (not-found pages excepted; only the
 * links when not to `send`).
 */
function captureFailure(
  c: Context,
  error: unknown,
  digest: string,
  send: boolean,
  eventId?: string,
): FailureLinks {
  const trace = requestTraceOf(c);
  const spanContext = trace?.span.spanContext();
  const links = {
    trace_id: spanContext?.traceId ?? null,
    span_id: spanContext?.spanId ?? null,
    sentry_event_id: null,
  };
  if (!send || isNotFoundRoute(c)) return links;
  if (trace) attachRequest(trace.isolationScope, c.req.raw);
  // Explicit scopes: a failure inside a streamed boundary is reported outside the request's
  // async context.
  const sent = withIsolationScope(
    trace?.isolationScope,
    () =>
      withActiveSpan(trace?.span ?? null, () =>
        captureException(error, {
          event_id: eventId,
          mechanism: { handled: false, type: "auto.http.hono" },
          captureContext: {
            tags: {
              digest,
              route: trace?.route ?? loggedPath(c.req.path),
              method: loggedMethod(c.req.method),
              request_id: internalsOf(c).requestId ?? null,
            },
          },
        })),
  );
  return { ...links, sentry_event_id: sent };
}

/** Captures a rejection no code handled, or a background job's failure: no request's. */
function captureUnhandled(error: unknown, digest: string, job?: string): FailureLinks {
  const eventId = captureException(error, {
    mechanism: { handled: false, type: mechanismOf(job) },
    captureContext: { tags: job === undefined ? { digest } : { digest, job } },
  });
  return { trace_id: null, span_id: null, sentry_event_id: eventId };
}

function isNotFoundTransaction(event: Event): boolean {
  return event.contexts?.trace?.data?.[NOT_FOUND_ATTRIBUTE] === true;
}

/**
 * The span's trace for the page: from the span itself, not `getTraceData()`, which gives nothing
 * without a DSN (Spotlight only).
 */
function pageTraceOf(span: Span | undefined): PageTrace | undefined {
  return span && { sentryTrace: spanToTraceHeader(span), baggage: spanToBaggageHeader(span) };
}
