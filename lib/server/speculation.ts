/**
 * @module
 * Speculation rules: every page carries a `<script type="speculationrules">` (with the request's
 * CSP nonce) that has the browser prefetch a same-origin link's page when the pointer rests on it
 * or touches it (`"eagerness": "moderate"`), so the click finds the document already loaded.
 * Links whose pages are worth rendering ahead - marked `data-prerender`, or leading to a route
 * that exports `prerender = true` - are prerendered instead. Never speculated: links marked
 * `data-no-prefetch` (on the link or an ancestor), the framework's own paths (`/_...`: actions,
 * assets, the Sentry tunnel), and sign-out links by their usual names. Forms are never
 * speculated, so neither are server actions. The rules are made once, when the app is.
 *
 * The server sees a speculative request by `Sec-Purpose: prefetch` (`isSpeculative`): the session
 * is read but its idle timer not moved (`lib/auth/current.ts`), since the user may never come.
 */
import type { RouteModule } from "./manifest.ts";

/** The attribute that keeps a link (or every link inside an element) from being speculated. */
const NO_PREFETCH = "data-no-prefetch";
/** The attribute that has a link (or every link inside an element) prerendered, not prefetched. */
const PRERENDER = "data-prerender";

/** Paths whose last segments name a sign-out: following one ends the session. */
const SIGN_OUT = "/{*/}?(logout|log-out|signout|sign-out|logoff|log-off){/*}?";

/** Within the marked element, or the element itself. */
const marked = (attribute: string) => `[${attribute}], [${attribute}] *`;

/**
 * The rules' JSON for an app whose routes are `routes` (by their names, `/blog/:slug`, which read
 * as URL patterns): made once per app. Patterns are relative to the page, so they only ever match
 * our own origin. Written tersely (one `href_matches` with a list of patterns, one `not` around all
 * that is never speculated, no `or` of one): every page carries it (700 characters for the example,
 * where the rules one by one took 762).
 */
export function speculationRules(
  routes: readonly { name: string; module: RouteModule }[],
): string {
  const never = {
    not: {
      or: [
        { href_matches: [{ pathname: "/_*" }, { pathname: SIGN_OUT }] },
        { selector_matches: marked(NO_PREFETCH) },
      ],
    },
  };
  const ours = { href_matches: { pathname: "/*" } };
  const prerendered = routes
    .filter((route) => route.module.prerender && route.module.default)
    .map((route) => ({ pathname: route.name }));
  const byLink = { selector_matches: marked(PRERENDER) };
  const ahead = prerendered.length ? { or: [byLink, { href_matches: prerendered }] } : byLink;
  const rules = {
    prerender: [{ where: { and: [ours, ahead, never] }, eagerness: "moderate" }],
    // Not the links prerendered: a prefetch first would be what the server sees of them.
    prefetch: [{ where: { and: [ours, { not: ahead }, never] }, eagerness: "moderate" }],
  };
  // Inside a <script>: no `<` may start a tag (`</script>`) or a comment.
  return JSON.stringify(rules).replaceAll("<", "\\u003c");
}

/**
 * Whether the browser asked for this ahead of a navigation that may not come (`Sec-Purpose:
 * prefetch`, and `prefetch;prerender` for a prerender). Such a request should change nothing: the
 * framework moves no session's idle timer for it; count views and spend one-time things only when
 * this is false.
 *
 * @param req The request.
 * @returns `true` for a prefetch or prerender.
 *
 * @example
 * ```ts
 * // routes/_middleware.ts: count page views, not the browser's guesses
 * import { isSpeculative, type Middleware } from "shell";
 *
 * declare function countView(path: string): Promise<void>;
 *
 * export const handler: Middleware = async (c, next) => {
 *   if (!isSpeculative(c.req.raw)) await countView(c.req.path);
 *   await next();
 * };
 * ```
 * @see docs/navigation.md - What the server sees
 */
export function isSpeculative(req: Request): boolean {
  const purpose = req.headers.get("Sec-Purpose") ?? req.headers.get("Purpose");
  return purpose !== null && purpose.trimStart().startsWith("prefetch");
}
