/**
 * @module
 * A page's key in the shared cache, and the URL its cached render sees: the app's configured
 * origin, the path, and the query with its parameters sorted and re-encoded - never the `Host` or
 * `X-Forwarded-*` a client sends, so no request can make a page be stored under another's key.
 * The headers a route declares in `vary` join the key with their values. Past a bound (a long URL,
 * a long header value) a request gets no key: it is rendered and never stored - and so does one
 * whose path the URL parser would change (`/docs/%2e%2e/shop`, `\`): Deno hands the path to the
 * app as sent and Hono routes on it, so the resolved URL is another route's, whose page would be
 * stored under this route's policy and answered for it ahead of its middleware (fast_hit.ts).
 */

/** The longest path and query a page is cached under, in characters. */
const MAX_URL = 2048;
/** The longest value of a declared `vary` header that is cached on. */
const MAX_VARY_VALUE = 256;

export interface PageKey {
  /** Identifies the page among every other: URL, then each declared header's value. */
  key: string;
  /** The configured origin, the path and the normalized query: the URL the render sees. */
  url: string;
  /** The declared headers' values, for the render's request. */
  headers: [string, string][];
}

/**
 * The key of the page `requestUrl` asks for, on `origin`, varying on `vary` (lower-cased names)
 * as `headers` carries them; undefined when the request is past a bound.
 */
export function pageKey(
  origin: string,
  requestUrl: string,
  headers: Headers,
  vary: readonly string[],
): PageKey | undefined {
  const url = canonicalUrl(origin, requestUrl);
  return url === undefined ? undefined : keyWithVary(url, headers, vary);
}

/**
 * The URL a page's render sees: `origin`, then the path and the normalized query of `requestUrl`;
 * undefined past `MAX_URL`, or when the path is not as sent.
 */
export function canonicalUrl(origin: string, requestUrl: string): string | undefined {
  // Only the path and the query: the origin `req.url` carries comes from the client's `Host`.
  const { pathname, search } = new URL(requestUrl);
  if (pathname.length + search.length > MAX_URL) return undefined;
  if (!routedAsParsed(requestUrl, pathname)) return undefined;
  let query = "";
  if (search.length > 1) {
    const params = new URLSearchParams(search);
    params.sort();
    query = params.toString();
  }
  return origin + pathname + (query ? `?${query}` : "");
}

/**
 * Whether `requestUrl`'s path as sent (what Hono routes on) is `pathname`, the parsed one: no dot
 * segment resolved, no `\` turned into `/`, nothing percent-encoded on the way.
 */
function routedAsParsed(requestUrl: string, pathname: string): boolean {
  const start = requestUrl.indexOf("/", requestUrl.indexOf("//") + 2);
  if (start < 0 || !requestUrl.startsWith(pathname, start)) return false;
  const next = requestUrl[start + pathname.length];
  return next === undefined || next === "?" || next === "#";
}

/** The key of the page at `url` (`canonicalUrl`), with the values of `vary` in `headers`. */
export function keyWithVary(
  url: string,
  headers: Headers,
  vary: readonly string[],
): PageKey | undefined {
  let key = url;
  const varied: [string, string][] = [];
  for (const name of vary) {
    const value = headers.get(name);
    if (value === null) {
      // Absent is not empty: a page may tell them apart. No header value holds a NUL.
      key += "\n\0";
      continue;
    }
    if (value.length > MAX_VARY_VALUE) return undefined;
    key += `\n${value}`;
    varied.push([name, value]);
  }
  return { key, url, headers: varied };
}
