/**
 * @module
 * The headers a stored page answers with, made once per held page and policy rather than per
 * response: what every answer shares (the render's own headers, `Cache-Control`, `Vary`, `ETag`),
 * and - for hits answered ahead of the app's middleware (fast_hit.ts) - each whole header list
 * that middleware would have given the same response (the security headers with the CSP naming
 * the render's nonce, the coding, `X-Cache`), less what differs per request (`Age`, the id).
 */
import { FIXED_HEADERS } from "../server/security.ts";
import type { ContentCoding } from "../server/compression.ts";
import type { HeldPage } from "./entry.ts";
import type { ResolvedPolicy } from "./policy.ts";

type HeaderList = [string, string][];

/** A hit's headers in each form, less `Age` and `X-Request-Id`. */
export interface HitHeaders {
  /** Made for this policy and CSP (an app's: a page is held by one app). */
  for: ResolvedPolicy;
  csp: readonly [string, string];
  /** GET, by the content coding the body goes out in (`identity`: as it is). */
  get: Record<ContentCoding | "identity", HeaderList>;
  /** HEAD: GET's headers, no coding (compression.ts leaves HEAD as it is). */
  head: HeaderList;
  /**
   * 304: no `Content-Type`, and no CSP, which would replace the nonce of the page the browser
   * keeps.
   */
  notModified: HeaderList;
  /** The page's tag names, for the freshness check. */
  tags: readonly string[];
}

/**
 * `Cache-Control` (unless the handler set one) and `Vary` of a response the cache may answer.
 * `Vary` in one order whatever came before - `Cookie`, the declared headers, then what the
 * response named already (a miss's compressed render: `Accept-Encoding`) - so that a miss and the
 * hits after it say the same.
 */
export function sharedHeaders(headers: Headers, policy: ResolvedPolicy): void {
  if (!headers.has("Cache-Control")) headers.set("Cache-Control", policy.cacheControl);
  // Signed-in requests get another page from the same URL; so do the declared headers.
  const ours = ["Cookie", ...policy.vary];
  const named = new Set(ours.map((name) => name.toLowerCase()));
  const before = (headers.get("Vary") ?? "").split(",").map((name) => name.trim());
  const rest = before.filter((name) => name && !named.has(name.toLowerCase()));
  headers.set("Vary", [...ours, ...rest].join(", "));
}

/**
 * The headers every answer of `page` under `policy` shares, made once per page: `Vary` names
 * `Accept-Encoding` whenever the page is compressed (compression.ts then leaves the response as
 * it is); the compressed bytes have a length of their own.
 */
export function answerHeaders(page: HeldPage, policy: ResolvedPolicy): HeaderList {
  if (page.answers?.for === policy) return page.answers.headers;
  const headers = new Headers(page.headers);
  sharedHeaders(headers, policy);
  if (page.encoded) headers.append("Vary", "Accept-Encoding");
  headers.set("ETag", page.etag);
  page.answers = { for: policy, headers: [...headers] };
  return page.answers.headers;
}

/**
 * Every header list a hit of `page` answers with ahead of the middleware, made at its first such
 * hit: what `answer` in page_cache.ts gives and the security middleware adds, so the two paths
 * answer alike (tests/page_cache_fast_test.tsx compares them field by field).
 */
export function hitHeaders(
  page: HeldPage,
  policy: ResolvedPolicy,
  csp: readonly [string, string],
): HitHeaders {
  if (page.hits?.for === policy && page.hits.csp === csp) return page.hits;
  const shared = answerHeaders(page, policy);
  const hit: [string, string] = ["X-Cache", "HIT"];
  const secured: HeaderList = [["Content-Security-Policy", csp[0] + page.nonce + csp[1]]];
  for (const [name, value] of FIXED_HEADERS) secured.push([name, value]);
  const identity = [...shared, hit, ...secured];
  page.hits = {
    for: policy,
    csp,
    get: {
      identity,
      gzip: [...identity, ["Content-Encoding", "gzip"]],
      br: [...identity, ["Content-Encoding", "br"]],
    },
    head: identity,
    notModified: [
      ...shared.filter(([name]) => name !== "content-type"),
      hit,
      ...FIXED_HEADERS,
    ],
    tags: Object.keys(page.tags),
  };
  return page.hits;
}
