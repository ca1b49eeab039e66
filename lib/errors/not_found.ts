/**
 * @module
 * `throw notFound()` from a handler or during render answers with `_404.tsx` and status 404.
 */
import type { Context } from "hono";

const NOT_FOUND = Symbol.for("app.notFound");

/**
 * What `notFound()` makes; the app answers it with `_404.tsx` and 404.
 *
 * @internal
 */
export class NotFoundError extends Error {
  readonly [NOT_FOUND] = true;
  constructor(message = "Not found") {
    super(message);
    this.name = "NotFoundError";
  }
}

/**
 * An error to throw from a handler, middleware or page (also while rendering) for "there is no
 * such thing": the request is answered with `_404.tsx` and status 404, and nothing is reported.
 * Inside a Suspense boundary that renders after the page's shell went out, the status can no longer
 * change.
 *
 * @param message For the logs; the page does not show it.
 * @returns The error, to throw.
 *
 * @example
 * ```ts
 * import { type Handlers, notFound } from "shell";
 *
 * const POSTS: Record<string, string> = { "hello-world": "Hello, world" };
 *
 * export const handler: Handlers<string> = {
 *   GET(_req, ctx) {
 *     const post = POSTS[ctx.params.slug];
 *     if (!post) throw notFound(`no post ${ctx.params.slug}`);
 *     return ctx.render(post);
 *   },
 * };
 * ```
 * @see docs/failures.md — Not found
 */
export function notFound(message?: string): NotFoundError {
  return new NotFoundError(message);
}

export function isNotFound(error: unknown): boolean {
  return typeof error === "object" && error !== null && NOT_FOUND in error;
}

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
