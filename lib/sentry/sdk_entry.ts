/**
 * @module
 * Every function and constant of the Sentry SDK (`@sentry/deno`, `@sentry/core`) that the server's
 * Sentry modules use, from the packages themselves: the entry the production build bundles into one
 * minified, tree-shaken module (`build/sentry_server_sdk.ts`), and what `sdk.ts` loads where there
 * is no such bundle. Types are imported from the packages directly: they cost nothing at run time.
 */
export {
  addFetchInstrumentationHandler,
  captureException,
  continueTrace,
  createTransport,
  defineIntegration,
  dsnFromString,
  getClient,
  getEnvelopeEndpointWithUrlEncodedAuth,
  instrumentFetchRequest,
  LRUMap,
  SEMANTIC_ATTRIBUTE_SENTRY_OP,
  SEMANTIC_ATTRIBUTE_SENTRY_ORIGIN,
  SEMANTIC_ATTRIBUTE_SENTRY_SOURCE,
  serializeEnvelope,
  setHttpStatus,
  shouldPropagateTraceForUrl,
  spanToBaggageHeader,
  spanToTraceHeader,
  startSpanManual,
  suppressTracing,
  winterCGRequestToRequestData,
  withActiveSpan,
  withIsolationScope,
  withScope,
} from "@sentry/core";
export { flush, getDefaultIntegrations, globalHandlersIntegration, init } from "@sentry/deno";
