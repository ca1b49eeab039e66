/**
 * @module
 * Requests the not-found page answers (an unknown URL, `notFound()`, a failing `_404.tsx`): they
 * are never reported, neither as a Sentry event nor as a transaction. `notFound()` itself is
 * `httpError(404)` (`lib/shared/http_error.ts`).
 */
import type { Context } from "hono";
import { internalsOf } from "../server/internals.ts";

declare module "../server/internals.ts" {
  interface Internals {
    /** Set while the not-found page renders: see `isNotFoundRoute`. */
    notFoundRoute: boolean;
  }
}

/** Marks the request as answered by the not-found page (unknown URL, `notFound()`, `_404.tsx`). */
export function markNotFoundRoute(c: Context): void {
  internalsOf(c).notFoundRoute = true;
}

/**
 * True when the not-found page answers the request - also when `_404.tsx` itself failed. Sentry
 * sends nothing for such a request: no error event, no transaction; its failure is still logged.
 */
export function isNotFoundRoute(c: Context): boolean {
  return internalsOf(c).notFoundRoute === true;
}
