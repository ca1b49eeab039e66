/**
 * @module
 * The session cookie: only the opaque token, `HttpOnly` (no script reads it), `SameSite=Lax` (no
 * other site's form or fetch sends it along with a POST), `Path=/`; over https also `Secure` and the
 * `__Host-` prefix, with which the browser refuses the cookie unless it is Secure, has no `Domain`
 * and is for `/` — so neither a subdomain nor plain http can set or shadow it. It lives as long as
 * the session at most (the server decides sooner ends).
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AuthSettings } from "./settings.ts";
import { isToken } from "./token.ts";

/** The token the request carries, if it has a token's shape; no parsing without the cookie. */
export function tokenOf(c: Context, settings: AuthSettings): string | undefined {
  if (!c.req.header("cookie")?.includes(settings.cookie)) return undefined;
  const value = getCookie(c, settings.cookie);
  return isToken(value) ? value : undefined;
}

export function setSessionCookie(c: Context, settings: AuthSettings, token: string): void {
  setCookie(c, settings.cookie, token, {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: settings.secure,
    maxAge: Math.floor(settings.absoluteTimeoutMs / 1000),
  });
}

export function clearSessionCookie(c: Context, settings: AuthSettings): void {
  deleteCookie(c, settings.cookie, {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: settings.secure,
  });
}
