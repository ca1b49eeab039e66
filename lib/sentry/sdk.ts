/**
 * @module
 * The Sentry SDK as the server's Sentry modules import it: in production, the build's bundle of
 * `sdk_entry.ts` (`_build/server-sdk.js`, made by `build/sentry_server_sdk.ts`), where V8 keeps
 * 180 KB of minified code, not the sources and bytecode of the packages' four hundred modules (a
 * Sentry-on server idles 10 MB smaller with it, and its heap holds 6 MB less). In
 * development, and wherever there is no bundle (a tree not built), the packages themselves - the
 * same code, so the two cannot differ but in size. NODE_ENV decides as it does for React
 * (`cli/node_env.ts`): a production build is rebuilt whenever the lockfile changes, a dev server's
 * is not, so only a production process can rely on the bundle being of the locked SDK.
 */
import { existsSync } from "node:fs";
import type * as Entry from "./sdk_entry.ts";

const BUNDLE = new URL("../../_build/server-sdk.js", import.meta.url);

const sdk: typeof Entry = Deno.env.get("NODE_ENV") === "production" && existsSync(BUNDLE)
  ? await import(BUNDLE.href)
  : await import("./sdk_entry.ts");

export const {
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
  flush,
  getDefaultIntegrations,
  globalHandlersIntegration,
  init,
} = sdk;
