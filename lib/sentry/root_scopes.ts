/**
 * @module
 * A request's Sentry scopes, forked from the SDK's root scopes whatever async context is current.
 * Deno evaluates a module first imported with `import()` in the importer's async context and
 * leaves that context current afterwards, so `Deno.serve` calls every later handler inside it:
 * after one request's first `import()`, each later request would fork that request's scopes, its
 * transaction a child span of the ended one (never sent), its events carrying that request's
 * data. (Under Deno's OpenTelemetry, `Deno.serve` gives each handler a fresh context, and
 * `on_otel.ts` keeps no scopes per request.)
 */
import type { Scope } from "@sentry/core";
import {
  getDefaultCurrentScope,
  getDefaultIsolationScope,
  withIsolationScope,
  withScope,
} from "./sdk.ts";

/**
 * A request's own scopes, as `withIsolationScope` makes them (a new trace unless one is being
 * continued), forked from the process's root scopes rather than from whatever context is current.
 */
export function withRequestScopes<T>(callback: (isolationScope: Scope) => T): T {
  return withScope(
    getDefaultCurrentScope(),
    () => withIsolationScope(getDefaultIsolationScope(), () => withIsolationScope(callback)),
  );
}
