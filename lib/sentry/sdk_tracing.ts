/**
 * @module
 * The SDK's own tracing, as `server.ts`, `middleware.ts` and `fetch.ts` import it: the build's
 * `_build/server-sdk/sdk_tracing.js` in production - the one bundle `sdk.ts` loads too where Deno's
 * OpenTelemetry does not trace - or the packages (see `sdk.ts`). Not loaded on Deno's
 * OpenTelemetry.
 */
import type * as Entry from "./sdk_tracing_entry.ts";
import { bundleOr } from "./sdk.ts";

const sdk = await bundleOr<typeof Entry>("sdk_tracing", () => import("./sdk_tracing_entry.ts"));

export const {
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
  getDefaultIntegrations,
  init,
} = sdk;
