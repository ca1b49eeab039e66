/**
 * @module
 * A route's `cache` export: what it declares (`CachePolicy`), checked once when the app is made -
 * a policy that makes no sense stops `createApp` with the route's file named - and the
 * `Cache-Control` each kind of page answers with.
 */

/**
 * What a route module exports as `cache` to have its page rendered once and served to everyone
 * from the shared page cache (Deno KV, every worker and instance, with a small in-process layer in
 * front). Times are in seconds. Requests with a session, non-GET/HEAD requests and responses that
 * set cookies or are not 200 are never stored or served from it (docs/caching.md).
 *
 * @example
 * ```tsx
 * // routes/pricing.tsx
 * import type { CachePolicy } from "shell";
 *
 * export const cache: CachePolicy = { maxAge: 60, staleWhileRevalidate: 600, tags: ["prices"] };
 *
 * export default function Pricing() {
 *   return <h1>Pricing</h1>;
 * }
 * ```
 * @see docs/caching.md
 */
export interface CachePolicy {
  /** Seconds a stored page is served as it is (at least 1, at most a year). */
  maxAge: number;
  /**
   * Seconds after `maxAge` during which the stored page is still served while one render in the
   * background replaces it (0, the default: once `maxAge` passed, the next request renders).
   */
  staleWhileRevalidate?: number;
  /**
   * Names `revalidateTag(tag)` drops the page by (at most 16, each 1-128 printable ASCII
   * characters). A function of the request's route params and canonical URL gives each page tags
   * of its own (`({ params }) => [\`post:${params.slug}\`]`), so one entity's pages can be dropped
   * alone; a request for which it gives something else (a param too long, not ASCII) is rendered
   * and never stored.
   */
  tags?: readonly string[] | ((page: TagSource) => readonly string[]);
  /**
   * Request headers the page reads (`Accept-Language`): each value is part of the page's key and
   * the response says `Vary` on it. A response that varies on anything else is never stored.
   * `Cookie` and `Authorization` cannot be named: such requests bypass the cache.
   */
  vary?: readonly string[];
}

/**
 * What a `tags` function of a route's `cache` gets: the route's params and the page's canonical
 * URL (the configured origin, never the request's `Host`).
 *
 * @example
 * ```ts
 * // routes/blog/[slug].tsx
 * import type { CachePolicy, TagSource } from "shell";
 *
 * export const cache: CachePolicy = {
 *   maxAge: 300,
 *   tags: ({ params }: TagSource) => ["posts", `post:${params.slug}`],
 * };
 * ```
 * @see docs/caching.md
 */
export interface TagSource {
  /** The route's params, decoded (`{ slug: "first-post" }`). */
  readonly params: Readonly<Record<string, string>>;
  /** The page's canonical URL: the configured origin, the path, the normalized query. */
  readonly url: URL;
}

/** A policy, checked, with its defaults and its `Cache-Control` made once. */
export interface ResolvedPolicy {
  maxAge: number;
  staleWhileRevalidate: number;
  /** The page's tags: checked, or undefined when a `tags` function gave something that is not. */
  tags: (page: () => TagSource) => readonly string[] | undefined;
  /** Lower-cased. */
  vary: readonly string[];
  /** For a response the shared cache may answer: public, revalidated by browsers, kept by CDNs. */
  cacheControl: string;
}

const YEAR = 365 * 24 * 3600;
const MAX_TAGS = 16;
const TAG = /^[\x21-\x7e]{1,128}$/;
const HEADER = /^[!#$%&'*+.^_`|~0-9a-z-]{1,64}$/;
const NEVER_VARY = new Set(["cookie", "authorization"]);

/**
 * What a page with no `cache` answers with, whoever asks: nothing the framework knows says the
 * page is the same for everyone (a layout may show who is signed in), so no shared cache may keep
 * it and the browser asks again each time.
 */
export const PRIVATE = "private, no-cache";

/**
 * What a page that read the request's session answers with (`shell/auth`'s guards say the same):
 * no shared cache keeps it, the browser asks again before using what it keeps, and - unlike
 * `no-store` - the page stays eligible for the back/forward cache. Signing out clears what the
 * browser kept of the origin (`Clear-Site-Data: "cache"`, lib/auth/sign_out.ts), so going Back
 * after it shows no signed-in page.
 */
export const SIGNED_IN = "private, no-cache";

/** `value` (a route's `cache` export) checked; throws naming `file` when it makes no sense. */
export function resolvePolicy(file: string, value: unknown): ResolvedPolicy {
  const fail = (why: string): never => {
    throw new TypeError(`routes/${file}: export const cache: ${why}`);
  };
  if (typeof value !== "object" || value === null) fail("expected { maxAge, \u2026 }");
  const policy = value as CachePolicy;
  const seconds = (name: string, n: unknown, min: number) => {
    if (!Number.isInteger(n) || (n as number) < min || (n as number) > YEAR) {
      fail(`${name} must be whole seconds from ${min} to ${YEAR}`);
    }
    return n as number;
  };
  const maxAge = seconds("maxAge", policy.maxAge, 1);
  const staleWhileRevalidate = seconds(
    "staleWhileRevalidate",
    policy.staleWhileRevalidate ?? 0,
    0,
  );
  let tags: ResolvedPolicy["tags"];
  if (typeof policy.tags === "function") {
    const of = policy.tags;
    tags = (page) => {
      const given = of(page());
      return Array.isArray(given) && given.length <= MAX_TAGS && given.every(isTag)
        ? [...new Set(given)]
        : undefined;
    };
  } else {
    const list = [...new Set(policy.tags ?? [])];
    if (!Array.isArray(policy.tags ?? []) || list.length > MAX_TAGS) {
      fail(`tags must be a list of at most ${MAX_TAGS}, or a function giving one`);
    }
    for (const tag of list) {
      if (typeof tag !== "string" || !TAG.test(tag)) {
        fail(`tag ${JSON.stringify(tag)}: 1\u2013128 printable ASCII characters, no spaces`);
      }
    }
    tags = () => list;
  }
  const vary = [...new Set((policy.vary ?? []).map((name) => String(name).toLowerCase()))];
  for (const name of vary) {
    if (!HEADER.test(name)) fail(`vary: ${JSON.stringify(name)} is not a header name`);
    if (NEVER_VARY.has(name)) fail(`vary: ${name} cannot be cached on; such requests bypass it`);
  }
  const swr = staleWhileRevalidate ? `, stale-while-revalidate=${staleWhileRevalidate}` : "";
  return {
    maxAge,
    staleWhileRevalidate,
    tags,
    vary,
    cacheControl: `public, max-age=0, s-maxage=${maxAge}${swr}`,
  };
}

/** The tag's shape, as `revalidateTag` checks it too. */
export function isTag(tag: unknown): tag is string {
  return typeof tag === "string" && TAG.test(tag);
}
