/**
 * @module
 * Signing out: the session is deleted from KV - so it is over on every worker and instance at the
 * same moment, whatever any browser still holds - and the cookie is cleared. "Everywhere" deletes
 * every session of the user, found through their index, each with its index entry.
 *
 * Signed-in pages are `private, no-cache`: the browser keeps them, in its HTTP cache and its
 * back/forward cache, and going Back shows what it kept without asking. Signing out therefore
 * answers with `Clear-Site-Data: "cache"` (the HTTP cache of this origin goes), and clears the
 * session's mark, which a signed-in page restored from the back/forward cache checks
 * (restored.tsx): the header alone cannot reach that page, which enters the back/forward cache only
 * once the navigation the sign-out answers has committed (checked in Chromium, tests/example/e2e).
 */
import { kvOf } from "../kv/access.ts";
import { type AnyContext, contextOf } from "../server/scope.ts";
import { clearSessionCookie } from "./cookie.ts";
import { forgetDevices } from "./devices.ts";
import { replaceSession, sessionOf } from "./current.ts";
import { endAllSessions, endSession } from "./sessions.ts";
import { authSettings } from "./settings.ts";

/** What signing out tells the browser to forget: the pages it kept of this origin. */
const CLEAR_CACHE = '"cache"';

/**
 * Ends this request's session on every worker and instance at once, and clears its cookie. Does
 * nothing more when nobody is signed in.
 *
 * @param from `requestContext()` in a server action (or a handler's `ctx`, a middleware's `c`).
 *
 * @example
 * ```ts
 * // routes/_account/actions.ts
 * "use server";
 * import { redirect, requestContext } from "shell";
 * import { signOut } from "shell/auth";
 *
 * export async function logOut(): Promise<void> {
 *   await signOut(requestContext());
 *   redirect("/");
 * }
 * ```
 * @see docs/users.md - Signing out
 */
export async function signOut(from: AnyContext): Promise<void> {
  const c = contextOf(from);
  const session = await sessionOf(c);
  if (session) await endSession(kvOf(c), session);
  clearSessionCookie(c, authSettings(c));
  c.header("Clear-Site-Data", CLEAR_CACHE);
  replaceSession(c, undefined);
}

/**
 * Ends every session of this request's user - every browser and device they signed in on - on
 * every worker and instance at once, forgets which browsers they signed in with (a lost device's
 * cookie no longer has a sign-in limit apart from the account's), and clears this request's cookie.
 *
 * @param from `requestContext()` in a server action (or a handler's `ctx`, a middleware's `c`).
 * @returns How many sessions ended (0 when nobody is signed in).
 *
 * @example
 * ```ts
 * // routes/_account/actions.ts
 * "use server";
 * import { redirect, requestContext } from "shell";
 * import { signOutEverywhere } from "shell/auth";
 *
 * export async function logOutEverywhere(): Promise<void> {
 *   await signOutEverywhere(requestContext());
 *   redirect("/login");
 * }
 * ```
 * @see docs/users.md - Signing out
 */
export async function signOutEverywhere(from: AnyContext): Promise<number> {
  const c = contextOf(from);
  const session = await sessionOf(c);
  const ended = session ? await endAllSessions(kvOf(c), session.record.userId) : 0;
  // A lost device's cookie would still have a sign-in limit of its own (devices.ts).
  if (session) await forgetDevices(kvOf(c), session.record.userId);
  clearSessionCookie(c, authSettings(c));
  c.header("Clear-Site-Data", CLEAR_CACHE);
  replaceSession(c, undefined);
  return ended;
}
