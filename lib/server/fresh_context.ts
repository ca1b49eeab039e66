/**
 * @module
 * Each request starts in the async context the app was made in. Deno (2.9.6) runs a module that
 * `import()` loads for the first time in the importing request's async context and leaves that
 * context current afterwards, so every later request would begin inside it: `requestContext()`
 * answering a page's handler with an earlier action's request (another user's headers and cookies),
 * Sentry's scopes with that request's ended transaction (tests/async_context_test.tsx,
 * tests/sentry_dynamic_import_test.tsx). Under Deno's OpenTelemetry each request already gets a
 * context of its own, carrying its span, which must stay: nothing is done then.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { denoTracing } from "../otel/detect.ts";

type Fetch = (req: Request, info?: Deno.ServeHandlerInfo) => Response | Promise<Response>;

/** `fetch`, each call run in the async context current now (when the app is made). */
export function inFreshContext(fetch: Fetch): Fetch {
  if (denoTracing()) return fetch;
  const root = AsyncLocalStorage.snapshot();
  // Two named parameters: Deno.serve hands no request to a handler that declares none.
  return (req, info) => root(() => fetch(req, info));
}
