/**
 * @module
 * `@sentry/deno` for errors only, on the trace of Deno's OpenTelemetry: the SDK makes no span and
 * sends no transaction - Deno's spans go to Sentry over OTLP (see `otel/env.ts`) - and each error
 * event carries the ids of its request's span, its envelope the trace's DSC. How it starts:
 * - no `tracesSampleRate`: the SDK starts no span at all;
 * - its client started as `@sentry/deno`'s `init` starts it, less the tracer provider `init` would
 *   put in place of Deno's (every span the app starts, render and actions, would be lost) and
 *   less its list of default integrations, whose code `init` loads whether they run or not;
 * - with only the default integrations that shape error events (`errorIntegrations`): not
 *   `DenoServe` (a scope, a span and a copied body for every request), `Breadcrumbs` (with no
 *   scope per request, one request's crumbs would land on another's event), `DenoHttp` (Sentry
 *   headers for `node:http` calls on the SDK's own trace, not Deno's, and an AsyncLocalStorage for
 *   scopes we never keep across awaits) or the database and framework integrations, which would
 *   make spans;
 * - its posts to the ingest make no span and carry no header (see `otel_fetch.ts`).
 */
import { trace } from "@opentelemetry/api";
import type { Event } from "@sentry/core";
import {
  captureException,
  contextLinesIntegration,
  createStackParser,
  dedupeIntegration,
  defineIntegration,
  DenoClient,
  denoContextIntegration,
  dsnFromString,
  flush,
  functionToStringIntegration,
  getIntegrationsToSetup,
  globalHandlersIntegration,
  inboundFiltersIntegration,
  initAndBind,
  linkedErrorsIntegration,
  nodeStackLineParser,
  normalizePathsIntegration,
  requestDataIntegration,
  withScope,
} from "./sdk.ts";
import type { Context } from "hono";
import { isNotFoundRoute } from "../errors/not_found.ts";
import { activeBaggageHeader } from "../otel/request_span.ts";
import type { Reporter } from "../otel/telemetry.ts";
import { browserConnectSources, privateHosts, type SentryConfig } from "./config.ts";
import {
  type DscSource,
  isSampled,
  isValidSpan,
  sentryTraceOf,
  traceBaggage,
  traceDsc,
} from "./dsc.ts";
import { propagateOnFetch } from "./otel_fetch.ts";
import { sentryHead, unsampledHead } from "./page.ts";
import { scrubIntegration } from "./scrub.ts";
import { spotlightIntegration } from "./spotlight.ts";
import { timedTransport } from "./transport.ts";
import { sentryTunnel } from "./tunnel.ts";
import { internalsOf } from "../server/internals.ts";
import { loggedMethod, loggedPath } from "../server/log.ts";
import { requestData } from "./request_data.ts";
import { mechanismOf } from "./mechanism.ts";

/** `@sentry/deno`'s default integrations that shape error events, in its order. */
const errorIntegrations = () => [
  inboundFiltersIntegration(),
  requestDataIntegration(),
  functionToStringIntegration(),
  linkedErrorsIntegration(),
  dedupeIntegration(),
  denoContextIntegration(),
  contextLinesIntegration(),
  normalizePathsIntegration(),
];

/** `sampleRate`: the ratio of new traces Deno samples, for new DSCs. */
export function startSentryOnOtel(config: SentryConfig, sampleRate?: number): Reporter {
  const source: DscSource = {
    publicKey: config.dsn ? dsnFromString(config.dsn)?.publicKey ?? "" : "",
    environment: config.environment,
    release: config.release,
    sampleRate,
  };
  // `@sentry/deno`'s `init` (its `sdk.js`) without its tracer provider and its default list.
  initAndBind(DenoClient, {
    dsn: config.dsn,
    environment: config.environment,
    release: config.release,
    stackParser: createStackParser(nodeStackLineParser()),
    integrations: getIntegrationsToSetup({
      defaultIntegrations: errorIntegrations(),
      integrations: [
        // Its unhandled-rejection handler ends the process; the entry points keep the server alive
        // and report those through `captureFailure`.
        globalHandlersIntegration({ error: true, unhandledrejection: false }),
        otelTraceIntegration(source),
        scrubIntegration(config.scrubFields),
        ...config.spotlight ? [spotlightIntegration(config.spotlight)] : [],
      ],
    }),
    transport: timedTransport,
  });
  propagateOnFetch({
    source,
    targets: config.tracePropagationTargets,
    privateHosts: privateHosts(config),
  });
  const head = sentryHead(config);
  const unsampled = unsampledHead(config, source);

  return {
    routes(app) {
      if (config.tunnel && config.dsn) app.post(config.tunnel, sentryTunnel(config.dsn));
    },
    capture,
    /** None for the not-found page, so its browser sends nothing either. */
    head(c, span, assets) {
      if (isNotFoundRoute(c)) return undefined;
      const ids = span?.spanContext();
      if (!isValidSpan(ids)) return head(undefined, assets);
      const incoming = c.req.header("baggage");
      if (!isSampled(ids) && !incoming?.includes("sentry-")) return unsampled(ids, assets);
      const baggage = traceBaggage(ids, incoming, source);
      return head({ sentryTrace: sentryTraceOf(ids), baggage }, assets);
    },
    connectSources: browserConnectSources(config),
    flush: async (timeoutMs) => {
      await flush(timeoutMs);
    },
  };
}

/** Reports a failure of the request `c` (or of none), tagged with its digest. */
function capture(
  error: unknown,
  digest: string,
  c?: Context,
  eventId?: string,
  job?: string,
): string {
  return withScope((scope) => {
    if (c) {
      const action = internalsOf(c).action;
      scope.setTags({
        digest,
        route: action ? `action ${action.name}` : internalsOf(c).route ?? loggedPath(c.req.path),
        method: loggedMethod(c.req.method),
        request_id: internalsOf(c).requestId ?? null,
      });
      scope.setSDKProcessingMetadata({
        normalizedRequest: requestData(c.req.raw),
      });
    } else scope.setTags(job === undefined ? { digest } : { digest, job });
    return captureException(error, {
      event_id: eventId,
      mechanism: { handled: false, type: c ? "auto.http.hono" : mechanismOf(job) },
    });
  });
}

/**
 * Puts the active OTel span's ids on error events, and the trace's DSC where the envelope's header
 * takes it from (`dynamicSamplingContext`, which wins over the one of the SDK's own random trace).
 */
const otelTraceIntegration = defineIntegration((source: DscSource) => ({
  name: "OtelTrace",
  processEvent(event: Event): Event {
    const ids = trace.getActiveSpan()?.spanContext();
    if (event.type !== undefined || !isValidSpan(ids)) return event;
    const { parent_span_id: _, ...rest } = event.contexts?.trace ?? {};
    return {
      ...event,
      contexts: {
        ...event.contexts,
        trace: { ...rest, trace_id: ids.traceId, span_id: ids.spanId },
      },
      sdkProcessingMetadata: {
        ...event.sdkProcessingMetadata,
        dynamicSamplingContext: traceDsc(ids, activeBaggageHeader(), source),
      },
    };
  },
}));
