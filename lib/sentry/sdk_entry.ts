/**
 * @module
 * The functions and constants of the Sentry SDK (`@sentry/deno`, `@sentry/core`) that every server
 * path uses: an error event's client, its integrations and transport. On Deno's OpenTelemetry, as
 * production runs, this is all the server loads (`on_otel.ts` starts the client itself rather than
 * through `init`, whose default integrations would bring the code of every one of them). The SDK's
 * own tracing adds `sdk_tracing_entry.ts`. Each is bundled by the production build
 * (`build/sentry_server_sdk.ts`); this is what `sdk.ts` loads where there is no such bundle. Types
 * are imported from the packages directly: they cost nothing at run time.
 */
export {
  captureException,
  createStackParser,
  createTransport,
  dedupeIntegration,
  defineIntegration,
  dsnFromString,
  flush,
  functionToStringIntegration,
  getEnvelopeEndpointWithUrlEncodedAuth,
  getIntegrationsToSetup,
  inboundFiltersIntegration,
  initAndBind,
  linkedErrorsIntegration,
  LRUMap,
  nodeStackLineParser,
  requestDataIntegration,
  serializeEnvelope,
  shouldPropagateTraceForUrl,
  suppressTracing,
  winterCGRequestToRequestData,
  withScope,
} from "@sentry/core";
export {
  contextLinesIntegration,
  DenoClient,
  denoContextIntegration,
  globalHandlersIntegration,
  normalizePathsIntegration,
} from "@sentry/deno";
