/**
 * @module
 * `sdk_entry.ts` and what the SDK's own tracing adds to it (`server.ts`, `middleware.ts`,
 * `fetch.ts`): used only where Deno's OpenTelemetry does not trace the process (`SENTRY_OTLP=0`,
 * traces at 0). The production build's second bundle (`build/sentry_server_sdk.ts`), whole in
 * itself: a process loads one of the two (`sdk.ts`).
 */
export * from "./sdk_entry.ts";
export {
  addFetchInstrumentationHandler,
  continueTrace,
  getClient,
  instrumentFetchRequest,
  SEMANTIC_ATTRIBUTE_SENTRY_OP,
  SEMANTIC_ATTRIBUTE_SENTRY_ORIGIN,
  SEMANTIC_ATTRIBUTE_SENTRY_SOURCE,
  setHttpStatus,
  spanToBaggageHeader,
  spanToTraceHeader,
  startSpanManual,
  withActiveSpan,
  withIsolationScope,
} from "@sentry/core";
export { getDefaultIntegrations, init } from "@sentry/deno";
