/**
 * @module
 * The session cookie: only the opaque token, `HttpOnly` (no script reads it), `SameSite=Lax` (no
 * other site's form or fetch sends it along with a POST), `Path=/`; over https also `Secure` and
 * the `__Host-` prefix, with which the browser refuses the cookie unless it is Secure, has no
 * `Domain` and is for `/` - so neither a subdomain nor plain http can set or shadow it. It lives as
 * long as the session at most (the server decides sooner ends).
 *
 * Beside it, the session's mark (`markCookie`): when the session began, base 36, readable by
 * script, no secret. A signed-in page kept in the back/forward cache compares it with its own when
 * it is shown again (restored.tsx): signed out, or someone else signed in, it loads anew.
 */
import type { Context } from "hono";
import { deleteCookie, generateCookie, getCookie } from "hono/cookie";
import type { AuthSettings } from "./settings.ts";
import { isToken } from "./token.ts";

/** The token the request carries, if it has a token's shape; no parsing without the cookie. */
export function tokenOf(c: Context, settings: AuthSettings): string | undefined {
  if (!c.req.header("cookie")?.includes(settings.cookie)) return undefined;
  const value = getCookie(c, settings.cookie);
  return isToken(value) ? value : undefined;
}

export function setSessionCookie(
  c: Context,
  settings: AuthSettings,
  token: string,
  mark: string,
): void {
  for (const cookie of sessionCookies(settings, token, mark)) {
    c.header("Set-Cookie", cookie, { append: true });
  }
}

/** The `Set-Cookie` values of a new session: its token, and its mark. */
export function sessionCookies(settings: AuthSettings, token: string, mark: string): string[] {
  const maxAge = Math.floor(settings.absoluteTimeoutMs / 1000);
  const flags = { path: "/", sameSite: "Lax", secure: settings.secure, maxAge } as const;
  return [
    generateCookie(settings.cookie, token, { ...flags, httpOnly: true }),
    generateCookie(markCookie(settings), mark, flags),
  ];
}

export function clearSessionCookie(c: Context, settings: AuthSettings): void {
  const flags = { path: "/", sameSite: "Lax", secure: settings.secure } as const;
  deleteCookie(c, settings.cookie, { ...flags, httpOnly: true });
  if (c.req.header("cookie")?.includes(markCookie(settings))) {
    deleteCookie(c, markCookie(settings), flags);
  }
}

/** The session mark's cookie: the session cookie's name and `-mark` (`__Host-` kept). */
export function markCookie(settings: AuthSettings): string {
  return `${settings.cookie}-mark`;
}

/** A session's mark: when it began, base 36. */
export function markOf(createdAt: number): string {
  return createdAt.toString(36);
}
