/**
 * @module
 * The shared page cache around a route's dispatch. For a route that exports `cache`, a GET asks,
 * in turn: may this request use the cache at all (no session, no credentials, a URL within bounds),
 * is the page in this process's memory, is it in Deno KV (every worker and instance) - and are its
 * tags' versions still current. A fresh page is answered from there; a stale one too, while one
 * render in the background replaces it (one per process, and one of all processes by a KV lease).
 * A miss is rendered once for every request that wants the page meanwhile, in this process and
 * across processes (the same lease); the others wait, boundedly, and are answered from what it
 * stored.
 *
 * Every render the cache stores is a request of its own made here, for the page's canonical URL
 * (the configured origin, the path, the normalized query) carrying only the headers the route
 * declares in `vary`: no cookie, no `Host` or `X-Forwarded-*` of a client's ever reaches a stored
 * render, so none can poison it. On a miss that render still streams to its requester, copied on
 * the way (up to a bound) and stored once it ended well. Responses of routes without `cache`, and
 * requests the cache passes by, are `private, no-cache` unless the handler said otherwise.
 *
 * A fresh page in memory of a route with no `_middleware.ts` is answered before all of this, at the
 * top of the app's `fetch` (`ahead`, fast_hit.ts), once this path has answered its URL.
 *
 * This module holds the settings and what an app with no route to cache (or the cache off) needs;
 * the cache at work is `active.ts`, imported only when a route declares one: a module, once loaded,
 * stays in the heap for as long as the process serves.
 */
import type { Context } from "hono";
import { log } from "../server/log.ts";
import type { ManifestRoute } from "../server/manifest.ts";
import type { TraceIds } from "../server/telemetry.ts";
import { type ResolvedPolicy, resolvePolicy } from "./policy.ts";
import { privateByDefault } from "./private.ts";

declare module "../server/internals.ts" {
  interface Internals {
    /** A Suspense boundary of the page failed after its shell: the page is not stored. */
    renderFailed: true;
  }
}

/**
 * The page cache's bounds (`AppOptions.pageCache`); each has a default, and the entry points read
 * them from `PAGE_CACHE_*` (docs/settings.md).
 *
 * @example
 * ```ts
 * import { createApp, type PageCacheOptions } from "shell/server";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * const pageCache: PageCacheOptions = { memoryBytes: 8 * 1024 * 1024, tagCheckMs: 25 };
 * const app = createApp(manifest, {
 *   root: Deno.cwd(),
 *   origins: ["https://app.example"],
 *   kv: await Deno.openKv(":memory:"),
 *   pageCache,
 * });
 * ```
 * @see docs/caching.md - Settings
 */
export interface PageCacheOptions {
  /** Pages this process keeps in memory in front of KV: 1000. */
  memoryEntries?: number;
  /** Bytes those pages may take, and misses' pages read ahead of slow requesters: 32 MiB. */
  memoryBytes?: number;
  /** Places for pages in KV, across every worker and instance: 10,000. */
  kvEntries?: number;
  /** The largest body stored, in bytes: 512 KiB (at most 600 KiB); a larger page is not stored. */
  maxBodyBytes?: number;
  /** How old, in ms, this process's tag versions may be when a request uses them: 25. */
  tagCheckMs?: number;
  /**
   * Fresh hits held in memory are answered ahead of the app's middleware, for routes with no
   * `_middleware.ts` on their chain, when the telemetry has no middleware or records such hits
   * (`Telemetry.hit`; docs/caching.md, "Hits ahead of the chain"): true.
   */
  fastHits?: boolean;
}

type Fetch = (req: Request) => Response | Promise<Response>;
export type ServeFetch = (
  req: Request,
  info?: Deno.ServeHandlerInfo,
) => Response | Promise<Response>;
export type Dispatch = (c: Context) => Promise<Response>;

export interface PageCacheSetup {
  routes: ManifestRoute[];
  buildId: string;
  kv?: Deno.Kv;
  origins?: string[];
  dev: boolean;
  options?: PageCacheOptions | false;
  /** The render's deadline, shell and stream together (ms); a cache render ends by it. */
  renderLimitMs: number;
  /** The app's own fetch, for the renders the cache makes. */
  fetch: () => Fetch;
  /** Whether the app compresses its responses (`AppOptions.compress`): hits then do, too. */
  compress: boolean;
  /**
   * What hits answered ahead of the app's middleware need of the app (fast_hit.ts): `hit` records
   * each for the telemetry; false when the app has middleware of its own around every request (a
   * telemetry plugin's without `hit`), which such a hit would skip.
   */
  ahead: {
    csp: readonly [string, string];
    logRequests: boolean;
    requestIds?: () => TraceIds | undefined;
    hit?: (req: Request, route: string) => boolean;
  } | false;
}

export interface PageCache {
  /** `dispatch` of `route`, with the cache in front when the route declares one. */
  around(route: ManifestRoute, dispatch: Dispatch): Dispatch;
  /** `fetch` (the app's), with fresh hits in memory answered before it (fast_hit.ts). */
  ahead(fetch: ServeFetch): ServeFetch;
  /**
   * Stops the renders in the background (none is stored) and resolves once each, and each write of
   * a page rendered for a request, has let go of KV (its lease), at most `CLOSE_MS` later: the
   * store can then be closed under none of them.
   */
  close(): Promise<void>;
}

export function pageCache(setup: PageCacheSetup): PageCache {
  const policies = new Map<ManifestRoute, ResolvedPolicy>();
  for (const route of setup.routes) {
    if (route.module.cache !== undefined) {
      policies.set(route, resolvePolicy(route.file, route.module.cache));
    }
  }
  const origin = setup.origins?.[0];
  const off = setup.options === false ? "it is turned off" : setup.dev
    ? undefined // pages change as they are edited: nothing to say
    : !setup.kv
    ? "the app has no KV store"
    : !origin
    ? "the app's origin is not configured (APP_ORIGIN): a page's key never comes from Host"
    : undefined;
  if (policies.size === 0 || setup.dev || off) {
    if (policies.size > 0 && off) sayOff(off);
    return {
      around: (_route, dispatch) => privateByDefault(dispatch),
      ahead: (fetch) => fetch,
      close: () => Promise.resolve(),
    };
  }
  const loaded = import("./active.ts").then(({ activePageCache }) =>
    activePageCache(setup, policies, origin!)
  );
  return loading(loaded, policies);
}

/** Why the cache is off, said already in this process. */
const saidOff = new Set<string>();

/**
 * Says why the page cache is off, once per process for each reason: a production start (one app)
 * says it at start-up, and the apps a product's tests make, many a process, do not repeat it.
 */
function sayOff(why: string): void {
  if (saidOff.has(why)) return;
  saidOff.add(why);
  log("info", `The page cache is off: ${why}. Routes declaring \`cache\` render every time.`);
}

/**
 * The cache while `active.ts` loads, and after: a request to a cached route waits for it; hits
 * ahead of the chain begin once it is there (before, there are none to answer).
 */
function loading(
  cache: Promise<PageCache>,
  policies: ReadonlyMap<ManifestRoute, ResolvedPolicy>,
): PageCache {
  let loaded: PageCache | undefined;
  cache.then((it) => loaded = it, () => {});
  return {
    around(route, dispatch) {
      if (!policies.has(route)) return privateByDefault(dispatch);
      let around: Dispatch | undefined;
      return async (c) => (around ??= (loaded ?? await cache).around(route, dispatch))(c);
    },
    ahead(fetch) {
      let ahead: ServeFetch | undefined;
      return (req, info) => loaded ? (ahead ??= loaded.ahead(fetch))(req, info) : fetch(req, info);
    },
    close: async () => await (await cache).close(),
  };
}
