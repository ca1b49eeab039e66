/**
 * @module
 * The Sentry SDK as the server's Sentry modules import it: in production, one of the build's
 * bundles (`_build/server-sdk/`, made by `build/sentry_server_sdk.ts`), where V8 keeps some 80 KB
 * of minified code (180 KB with the SDK's own tracing), not the sources and bytecode of the
 * packages' four hundred modules. In development, and wherever there is no bundle (a tree not
 * built), the packages themselves - the same code, so the two cannot differ but in size. NODE_ENV
 * decides as it does for React (`cli/node_env.ts`): a production build is rebuilt whenever the
 * lockfile changes, a dev server's is not, so only a production process can rely on the bundle
 * being of the locked SDK.
 *
 * A process loads one bundle, never both (two copies of the SDK): on Deno's OpenTelemetry, the
 * errors-only one (`sdk_entry.ts`); otherwise the one with the SDK's tracing as well
 * (`sdk_tracing_entry.ts`), which `sdk_tracing.ts` then shares.
 */
import { denoTracing } from "../otel/detect.ts";
import type * as Entry from "./sdk_entry.ts";

/** The bundle `name` (`sdk`, `sdk_tracing`) in production, or else what `packages` imports. */
export async function bundleOr<T>(name: string, packages: () => Promise<T>): Promise<T> {
  const bundle = new URL(`../../_build/server-sdk/${name}.js`, import.meta.url);
  return Deno.env.get("NODE_ENV") === "production" && exists(bundle)
    ? await import(bundle.href)
    : await packages();
}

/** Deno's own call, not `node:fs`: its modules would stay loaded (110 K characters of source). */
function exists(file: URL): boolean {
  try {
    Deno.statSync(file);
    return true;
  } catch {
    return false;
  }
}

const sdk: typeof Entry = denoTracing()
  ? await bundleOr("sdk", () => import("./sdk_entry.ts"))
  : await bundleOr("sdk_tracing", () => import("./sdk_tracing_entry.ts"));

export const {
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
  contextLinesIntegration,
  DenoClient,
  denoContextIntegration,
  globalHandlersIntegration,
  normalizePathsIntegration,
} = sdk;
