/**
 * @module
 * What the shared page cache takes: the requests it answers (GET or HEAD without credentials),
 * the responses it stores, and what of a stored response it keeps.
 */
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { FORM_STATE_COOKIE, SECURE_FORM_STATE_COOKIE } from "../actions/form_state.ts";
import { authSettings } from "../auth/settings.ts";
import { SECURITY_HEADER_NAMES } from "../server/security.ts";
import type { ResolvedPolicy } from "./policy.ts";
import { privateFor } from "./private.ts";

/** GET or HEAD, without credentials: no session or form-state cookie, no `Authorization`. */
export function usesCache(c: Context): boolean {
  const method = c.req.method;
  if (method !== "GET" && method !== "HEAD") return false;
  const { headers } = c.req.raw;
  if (headers.has("authorization")) return false;
  if (!headers.has("cookie")) return true;
  return getCookie(c, authSettings(c).cookie) === undefined &&
    getCookie(c, FORM_STATE_COOKIE) === undefined &&
    getCookie(c, SECURE_FORM_STATE_COOKIE) === undefined;
}

/** A response the cache did not take: private unless it says otherwise, and marked. */
export function bypass(c: Context, res: Response): Response {
  if (!res.headers.has("Cache-Control")) res.headers.set("Cache-Control", privateFor(c));
  res.headers.set("X-Cache", "BYPASS");
  return res;
}

/** Vary names the cache itself accounts for: compression's and the bypass on cookies. */
const HANDLED_VARY = new Set(["accept-encoding", "cookie"]);

/** A response the cache may store: a 200 with a body, no cookie set, varying only as it can. */
export function storable(res: Response, policy: ResolvedPolicy): boolean {
  if (res.status !== 200 || !res.body || res.headers.has("set-cookie")) return false;
  const vary = res.headers.get("vary");
  if (!vary) return true;
  return vary.split(",").every((name) => {
    const lower = name.trim().toLowerCase();
    return HANDLED_VARY.has(lower) || policy.vary.includes(lower);
  });
}

/** Headers a stored page answers with again: not those made per response or per request. */
const NOT_KEPT = new Set([
  "age",
  "content-encoding",
  "content-length",
  "date",
  "etag",
  "server-timing",
  "set-cookie",
  "transfer-encoding",
  "vary",
  "x-cache",
]);

export function headersToKeep(headers: Headers): [string, string][] {
  // The render's security headers too: each answer gets them anew (`securityHeaderList`), and
  // kept they went out twice (`Cross-Origin-Opener-Policy: same-origin, same-origin`).
  return [...headers].filter(([name]) => !NOT_KEPT.has(name) && !SECURITY_HEADER_NAMES.has(name));
}

/** The CSP nonce a response of ours names (security.ts writes it). */
export function nonceOfResponse(res: Response): string | undefined {
  return /'nonce-([^']+)'/.exec(res.headers.get("content-security-policy") ?? "")?.[1];
}
