/**
 * @module
 * Requests the not-found page answers (an unknown URL, `notFound()`, a failing `_404.tsx`): they
 * are never reported, neither as a Sentry event nor as a transaction. `notFound()` itself is
 * `httpError(404)` (`http_error.ts`).
 */
import type { Context } from "hono";

declare module "hono" {
  interface ContextVariableMap {
    /** Set while the not-found page renders: see `isNotFoundRoute`. */
    notFoundRoute: boolean;
  }
}

/** Marks the request as answered by the not-found page (unknown URL, `notFound()`, `_404.tsx`). */
export function markNotFoundRoute(c: Context): void {
  c.set("notFoundRoute", true);
}

/**
 * True when the not-found page answers the request — also when `_404.tsx` itself failed. Sentry
 * sends nothing for such a request: no error event, no transaction; its failure is still logged.
 */
export function isNotFoundRoute(c: Context): boolean {
  return c.get("notFoundRoute") === true;
}
