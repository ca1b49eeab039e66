/**
 * @module
 * The shared page cache at work (`page_cache.ts` says what it does, and loads this only for an app
 * with a route that exports `cache`): the layers in this process's memory and in Deno KV, tag
 * versions, renders in the background under a lease, the answers for hits, and fresh hits
 * answered ahead of the chain (fast_hit.ts).
 *
 * A miss renders once for all the requests that want the page meanwhile: in this process the
 * first renders and the others wait for what it stores; across processes the first to take the
 * page's lease renders and the others look in KV for its page (waiting.ts). A wait is bounded by
 * the render limit and by half of what its request's deadline leaves; past it, when that render
 * stored nothing (it failed, or its page may not be stored), or when its lease went unrenewed
 * (`LEASE_LAPSE_MS`: its process died; the waiter takes the lease over), a request renders the
 * page itself. A waiter is answered from the stored page, as a hit (with its render's nonce), never
 * from a stream it joins: a render that fails after its shell is never shown to it. A route whose
 * misses keep storing nothing (unknown URLs, each a 404) stops taking leases (`LEASELESS_AFTER`):
 * a lease costs two KV commits, which a flood of such URLs would otherwise buy at will.
 *
 * A miss's render is read ahead of its requester (body_copy.ts, bounded per page, per process and
 * in time), so its waiters have the page as soon as React made it, however slowly that requester
 * reads. The page a miss rendered is held in memory before its requester's last byte; its write to
 * KV, retried while another handle holds the file, goes on after the response, and the lease is
 * let go in the same commit (so a waiter elsewhere finds either the lease or the page); `close()`
 * waits for those writes.
 */
import type { Context } from "hono";
import { internalsOf } from "../server/internals.ts";
import { log } from "../server/log.ts";
import { securityHeaderList } from "../server/security.ts";
import { type ManifestRoute, middlewaresOf } from "../server/manifest.ts";
import { negotiateEncoding } from "../server/compression.ts";
import { timeLimit } from "../server/time_limit.ts";
import { answerHeaders, sharedHeaders } from "./answer.ts";
import { held, type HeldPage, storedBody, type StoredPage } from "./entry.ts";
import { fastHits, type LearnedRoute } from "./fast_hit.ts";
import { etagOf, matchesIfNoneMatch } from "./etag.ts";
import { type PageKey, pageKey } from "./key.ts";
import { memoryLayer } from "./memory.ts";
import type { PageCache, PageCacheOptions, PageCacheSetup } from "./page_cache.ts";
import { PRIVATE, type ResolvedPolicy } from "./policy.ts";
import { privateByDefault } from "./private.ts";
import { type Lease, MAX_BODY, type Seen, sharedLayer, type StoredInfo } from "./shared.ts";
import { tagVersions } from "./tags.ts";
import { announceStored, onStored } from "./stored_push.ts";
import { lapseWatch, pollFor, within } from "./waiting.ts";
import { copyUpTo, type ReadAhead, readUpTo } from "./body_copy.ts";
import { bypass, headersToKeep, nonceOfResponse, storable, usesCache } from "./cacheable.ts";

const PAGE_CACHE_DEFAULTS: Required<PageCacheOptions> = {
  memoryEntries: 1000,
  memoryBytes: 32 * 1024 * 1024,
  kvEntries: 10_000,
  maxBodyBytes: 512 * 1024,
  tagCheckMs: 25,
  fastHits: true,
};

/** How long `close()` waits for background renders and writes to let go of KV. */
const CLOSE_MS = 2000;
/** A lease is renewed past its render for the write's retries (shared.ts), at most. */
const LEASE_WRITE_MS = 5000;

/**
 * Misses in a row of one route that stored nothing, past which its misses take no lease: a flood
 * of unknown URLs (each a 404) must not cost two KV commits a request. A miss that stores resets
 * it.
 */
export const LEASELESS_AFTER = 8;

/**
 * Pages on their way to KV at once, each held until KV answers: past it (KV slow or hung) a page
 * stays in this process's memory only, and a lease taken for it expires by itself.
 */
export const MAX_WRITES = 64;

/** Background renders one process runs at once; stale pages beyond wait for a later request. */
const BACKGROUND_RENDERS = 8;
/** After another process took a page's lease, this one tries again no sooner than this. */
const LEASE_RETRY_MS = 250;

/** The requests the cache itself made, to the route that answers them. */
const ownRenders = new WeakMap<Request, { context?: Context }>();

/** The cache of `setup`'s routes that declare one (`policies`); `origin` makes their keys. */
export function activePageCache(
  setup: PageCacheSetup,
  policies: ReadonlyMap<ManifestRoute, ResolvedPolicy>,
  origin: string,
): PageCache {
  const given = Object.entries(setup.options ?? {}).filter(([, value]) => value !== undefined);
  const options = { ...PAGE_CACHE_DEFAULTS, ...Object.fromEntries(given) };
  const maxBody = Math.min(options.maxBodyBytes, MAX_BODY);
  const memory = memoryLayer(options.memoryEntries, options.memoryBytes);
  const shared = sharedLayer(setup.kv!, setup.buildId, options.kvEntries);
  const tags = tagVersions(setup.kv!, options.tagCheckMs);
  const background = new Map<string, Promise<void>>();
  /** The misses rendering in this process, by key: what each stored (undefined: nothing). */
  const firstRenders = new Map<string, Promise<HeldPage | undefined>>();
  /** Per route (its policy), its misses in a row that stored nothing (`LEASELESS_AFTER`). */
  const storedNothing = new Map<ResolvedPolicy, number>();
  /** Pages on their way to KV after their responses ended, for `close()` (`MAX_WRITES`). */
  const writes = new Set<Promise<void>>();
  /** Whether writes were refused since the last one let in: one warning line for the spell. */
  let behind = false;
  const leaseMs = setup.renderLimitMs + LEASE_WRITE_MS;
  /** Misses' pages read ahead of slow requesters (body_copy.ts), as many bytes as memory holds. */
  const readAhead: ReadAhead = { held: 0, limit: options.memoryBytes };
  const closing = new AbortController();
  const retryAt = new Map<string, number>();
  /** Revalidation leases of other processes seen by stale hits, to tell a dead holder's. */
  const revalidating = lapseWatch(1000);
  const fast = options.fastHits && setup.ahead
    ? fastHits({
      origin: origin!,
      memory,
      tags,
      compress: setup.compress,
      closing: closing.signal,
      csp: setup.ahead.csp,
      logRequests: setup.ahead.logRequests,
      requestIds: setup.ahead.requestIds,
      maxUrls: Math.max(options.memoryEntries, 1),
      hit: setup.ahead.hit,
      skip: (req) => ownRenders.has(req),
    })
    : undefined;

  const isLive = (page: StoredInfo, now: number) =>
    now - page.storedAt < (page.maxAge + page.staleWhileRevalidate) * 1000 &&
    tags.current(page.tags);

  /** The live page of `key`, else its slot in KV as read (for the miss's lease to check). */
  async function lookup(key: string): Promise<{ page?: HeldPage; seen?: Seen }> {
    const now = Date.now();
    const inMemory = memory.get(key);
    if (inMemory && isLive(inMemory, now)) return { page: inMemory };
    if (inMemory) memory.delete(key);
    const stored = await shared.read(key, (page) => isLive(page, now)).catch(reportKv("read"));
    if (!stored?.page) return { seen: stored?.seen };
    const page = held(stored.page, setup.compress);
    memory.set(page);
    return { page };
  }

  /** The page `rendered` makes, held in this process's memory. */
  async function keep(
    key: PageKey,
    policy: ResolvedPolicy,
    res: Response,
    rendered: Uint8Array,
    versions: Record<string, number>,
    storedAt: number,
  ): Promise<HeldPage> {
    const body = storedBody(rendered);
    const page = held({
      key: key.key,
      body,
      nonce: nonceOfResponse(res) ?? "",
      etag: await etagOf(body),
      headers: headersToKeep(res.headers),
      storedAt,
      maxAge: policy.maxAge,
      staleWhileRevalidate: policy.staleWhileRevalidate,
      tags: versions,
    }, setup.compress);
    memory.set(page);
    return page;
  }

  /** Writes `page` to KV after its response, then lets go of its lease if this process held it. */
  function persist(page: StoredPage | undefined, key: string, leased: boolean): void {
    if (!page && !leased) return;
    // Once closing, the store may close under any write `close()` did not see begin: the page is
    // kept in memory only, and a lease lapses for the others.
    if (closing.signal.aborted) {
      if (leased) shared.lapse(key);
      return;
    }
    if (writes.size >= MAX_WRITES) {
      if (leased) shared.lapse(key);
      if (!behind) {
        log("warn", `page cache: ${MAX_WRITES} writes to KV pending; pages kept in memory only`);
      }
      behind = true;
      return;
    }
    behind = false;
    const write = (async () => {
      // The lease is let go with the page, in one commit; alone when there is none.
      const written = page ? await shared.write(page, leased).catch(reportKv("write")) : false;
      if (!leased) return;
      if (!written) await shared.release(key).catch(reportKv("lease release"));
      announceStored(key); // the other workers waiting for it look now (stored_push.ts)
    })();
    writes.add(write);
    write.finally(() => writes.delete(write));
  }

  /** One render of `key` for the cache: its response, or undefined when the app gave none. */
  async function render(key: PageKey, signal: AbortSignal) {
    const request = new Request(key.url, { headers: key.headers, signal });
    const own: { context?: Context } = {};
    ownRenders.set(request, own);
    const res = await setup.fetch()(request);
    return { res, failed: () => !own.context || internalsOf(own.context).renderFailed === true };
  }

  /**
   * Renders a stale page again, once per process, and only where this process holds the lease:
   * taken, or taken over from a holder seen not renewing it for `LEASE_LAPSE_MS` (it died: no one
   * waits on a render in the background, so only the stale hits' looks can tell).
   */
  function revalidate(key: PageKey, policy: ResolvedPolicy, pageTags: readonly string[]): void {
    const id = key.key;
    if (background.has(id) || background.size >= BACKGROUND_RENDERS) return;
    if (closing.signal.aborted) return;
    if ((retryAt.get(id) ?? 0) > Date.now()) return;
    retryAt.delete(id);
    if (retryAt.size > 1000) retryAt.clear(); // bounded whatever pages clients ask for
    const job = (async () => {
      const now = Date.now();
      const fresh = (page: StoredInfo) =>
        now - page.storedAt < page.maxAge * 1000 && tags.current(page.tags);
      const latest = await shared.peek(id, fresh);
      if (latest.page) {
        memory.set(held(latest.page, setup.compress)); // another process rendered it already
        return;
      }
      const { lease: over, seen } = latest;
      if (over && !revalidating.lapsed(id, over)) return void retryAt.set(id, now + LEASE_RETRY_MS);
      if ((await shared.lease(id, leaseMs, { over, seen })) !== "taken") {
        retryAt.set(id, now + LEASE_RETRY_MS);
        return;
      }
      revalidating.forget(id);
      const limit = timeLimit(setup.renderLimitMs);
      // The render ends at its limit or when the app closes. Not `AbortSignal.any` with
      // `closing`: a signal that follows another is kept by it while listeners are on it and it
      // has not aborted - the render's request, and React's, on a render that ended well - so
      // the app's signal kept each background render's for as long as the app ran (some 2 KB
      // a render, attack 12).
      const ended = new AbortController();
      const end = () => ended.abort(closing.signal.reason ?? limit.signal.reason);
      closing.signal.addEventListener("abort", end, { once: true });
      limit.signal.addEventListener("abort", end, { once: true });
      // Closed while the lease was taken: a listener on a signal aborted already is never called.
      if (closing.signal.aborted) end();
      const { signal } = ended;
      try {
        const versions = tags.snapshot(pageTags);
        const began = Date.now();
        const { res, failed } = await render(key, signal);
        if (!storable(res, policy)) return void await res.body?.cancel();
        const bytes = await readUpTo(res.body!, maxBody);
        if (bytes && !failed() && !signal.aborted) {
          await shared.write(await keep(key, policy, res, bytes, versions, began), true);
        }
      } finally {
        closing.signal.removeEventListener("abort", end);
        limit.clear();
        await shared.release(id); // unless the page's write let go of it
        announceStored(id); // a miss in another worker may be waiting for this render
      }
    })().catch(reportKv("revalidate")).finally(() => background.delete(id));
    background.set(id, job);
  }

  /**
   * How long a request waits for another's render of its page: the render limit, and half of
   * what its deadline leaves it, so that it can still render the page itself.
   */
  function waitUntil(c: Context): number {
    const now = performance.now();
    const deadline = internalsOf(c).deadline;
    const left = deadline ? (deadline.expiresAt - now) / 2 : Infinity;
    return now + Math.min(setup.renderLimitMs, left);
  }

  /**
   * A miss's page made by another process: stored since the lookup (this one took the lease), or
   * by the render that holds the lease, looked for until `until`; or the versionstamp of that
   * lease, seen lapsed (`lapsed`: its holder died). With the file locked, whether another holds
   * the lease is read (reads go on under a writer's lock).
   */
  async function byOthers(
    key: string,
    lease: Lease,
    seen: Seen | undefined,
    until: number,
    signal: AbortSignal,
  ): Promise<{ page?: StoredPage; lapsed?: string }> {
    // Taken with the slot as the lookup saw it: nothing was stored since.
    if (lease === "taken") return seen ? {} : { page: (await shared.read(key)).page };
    const look = () => shared.peek(key, (page) => isLive(page, Date.now()));
    if (lease === "locked") {
      const now = await look();
      if (now.page || !now.lease) return now;
    }
    return await pollFor(look, until, signal, (wake) => onStored(key, wake));
  }

  /**
   * A miss: the page rendered once for every request that wants it meanwhile (the module's
   * comment says how), else rendered for this request.
   */
  async function miss(
    c: Context,
    key: PageKey,
    policy: ResolvedPolicy,
    pageTags: readonly string[],
    seen: Seen | undefined,
  ): Promise<Response> {
    const { signal } = c.req.raw;
    const until = waitUntil(c);
    const rendering = firstRenders.get(key.key);
    if (rendering) {
      const page = await within(rendering, until, signal);
      if (page) return answer(c, page, "HIT", policy);
      return await rendered(c, key, policy, pageTags, (page) => persist(page, key.key, false));
    }
    let settle!: (page?: HeldPage) => void;
    firstRenders.set(key.key, new Promise((resolve) => settle = resolve));
    let ended = false;
    let leased = false;
    /**
     * The first render's end: its waiters answered, its page written (`write`), its lease let go.
     */
    const end = (page?: HeldPage, write = true) => {
      if (ended) return;
      ended = true;
      clearTimeout(limit);
      firstRenders.delete(key.key);
      if (page) storedNothing.delete(policy);
      else storedNothing.set(policy, (storedNothing.get(policy) ?? 0) + 1);
      settle(page);
      persist(write ? page : undefined, key.key, leased);
    };
    // A body nobody reads or cancels (a middleware put another response in its place) ends it too.
    const limit = setTimeout(end, setup.renderLimitMs);
    Deno.unrefTimer(limit);
    try {
      // Coalescing across processes is for pages that get stored; this process's still holds.
      if ((storedNothing.get(policy) ?? 0) >= LEASELESS_AFTER) {
        return await rendered(c, key, policy, pageTags, end);
      }
      const lease = await shared.lease(key.key, leaseMs, { seen }).catch(reportKv("lease")) ??
        "locked";
      leased = lease === "taken";
      const { page: found, lapsed } = await byOthers(key.key, lease, seen, until, signal)
        .catch(reportKv("read")) ?? {};
      if (lapsed) {
        // Its holder died: this request renders it, under the lease if no other took it first.
        leased = await shared.lease(key.key, leaseMs, { over: lapsed }).catch(reportKv("lease")) ===
          "taken";
      }
      if (found && isLive(found, Date.now())) {
        const page = held(found, setup.compress);
        memory.set(page);
        end(page, false);
        return answer(c, page, "HIT", policy);
      }
      return await rendered(c, key, policy, pageTags, end);
    } catch (error) {
      end();
      throw error;
    }
  }

  /**
   * The cache's own render, streamed to the requester and kept once it ended well; `end` gets the
   * page kept, or nothing (not storable, failed, too large, abandoned), as soon as that is known.
   */
  async function rendered(
    c: Context,
    key: PageKey,
    policy: ResolvedPolicy,
    pageTags: readonly string[],
    end: (page?: HeldPage) => void,
  ): Promise<Response> {
    const versions = tags.snapshot(pageTags);
    const began = Date.now();
    const { res, failed } = await render(key, c.req.raw.signal);
    // The body carries the render's nonce: the requester's CSP names it (security.ts reads it).
    const nonce = nonceOfResponse(res);
    if (nonce) internalsOf(c).nonce = nonce;
    const headers = new Headers(res.headers);
    headers.set("X-Cache", "MISS");
    if (!storable(res, policy)) {
      end();
      if (!headers.has("Cache-Control")) headers.set("Cache-Control", PRIVATE);
      return new Response(res.body, { status: res.status, headers });
    }
    // The render as its requester gets it holds what the stored page has not (entry.ts): its forms'
    // submission keys, its trace. A CDN keeping it would give every visitor that one key - the
    // second's same post skipped and answered with the first's outcome - so only hits are public.
    if (!headers.has("Cache-Control")) headers.set("Cache-Control", PRIVATE);
    sharedHeaders(headers, policy);
    const body = copyUpTo(res.body!, maxBody, readAhead, setup.renderLimitMs, async (bytes) => {
      const page = bytes && !failed()
        ? await keep(key, policy, res, bytes, versions, began).catch(reportKv("store"))
        : undefined;
      end(page);
    });
    return new Response(body, { status: 200, headers });
  }

  /**
   * A stored page's response: the bytes held, compressed as the client accepts, with the render's
   * nonce in the CSP (entry.ts says why that is safe), made whole in one go - a header set later
   * makes Deno build the response again.
   */
  function answer(c: Context, page: HeldPage, state: "HIT" | "STALE", policy: ResolvedPolicy) {
    const common = answerHeaders(page, policy);
    const age = String(Math.max(0, Math.floor((Date.now() - page.storedAt) / 1000)));
    const { headers: request } = c.req.raw;
    const cache: [string, string] = ["X-Cache", state];
    const ifNoneMatch = request.get("if-none-match");
    if (ifNoneMatch !== null && matchesIfNoneMatch(ifNoneMatch, page.etag)) {
      const headers = new Headers(common);
      headers.delete("Content-Type");
      headers.set("Age", age);
      headers.set(...cache);
      internalsOf(c).keptPage = true;
      return new Response(null, { status: 304, headers });
    }
    if (c.req.method === "HEAD") {
      return new Response(null, { headers: [...common, cache, ["Age", age]] });
    }
    internalsOf(c).nonce = page.nonce;
    const coding = page.encoded && negotiateEncoding(request.get("accept-encoding"));
    const headers: [string, string][] = [...common, cache, ["Age", age]];
    if (coding) headers.push(["Content-Encoding", coding]);
    headers.push(...securityHeaderList(c));
    return new Response(coding ? page.encoded![coding] : page.body, { headers });
  }

  return {
    async close() {
      closing.abort();
      tags.close();
      if (background.size > 0 || writes.size > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const bound = new Promise((resolve) => timer = setTimeout(resolve, CLOSE_MS));
        await Promise.race([Promise.allSettled([...background.values(), ...writes]), bound]);
        clearTimeout(timer);
      }
      shared.close(); // a render still under way past the bound: its lease lapses for the others
    },
    ahead(fetch) {
      if (!fast) return fetch;
      return (req, info) => fast.answer(req) ?? fetch(req, info);
    },
    around(route, dispatch) {
      const policy = policies.get(route);
      if (!policy) return privateByDefault(dispatch);
      // A guard of the team's runs on every hit: only routes without one are answered ahead.
      const learned: LearnedRoute | undefined =
        fast && route.middlewares.flatMap(middlewaresOf).length === 0
          ? { policy, route: route.name }
          : undefined;
      return async (c) => {
        const own = ownRenders.get(c.req.raw);
        if (own) {
          own.context = c;
          return await dispatch(c);
        }
        const key = usesCache(c)
          ? pageKey(origin!, c.req.url, c.req.raw.headers, policy.vary)
          : undefined;
        const pageTags = key && policy.tags(() => ({
          params: c.req.param() as Record<string, string>,
          url: new URL(key.url),
        }));
        if (!key || !pageTags) return bypass(c, await dispatch(c));
        if (learned) fast!.learn(key.url, learned);
        // The tag versions the lookup compares with: none read per request, one per tag per check.
        if (pageTags.length > 0) await tags.fresh(pageTags)?.catch(reportKv("tag read"));
        const { page, seen } = await lookup(key.key);
        if (page) {
          if (Date.now() - page.storedAt < page.maxAge * 1000) {
            return answer(c, page, "HIT", policy);
          }
          revalidate(key, policy, pageTags);
          return answer(c, page, "STALE", policy);
        }
        if (c.req.method === "HEAD") {
          const res = await dispatch(c);
          if (res.status === 200) sharedHeaders(res.headers, policy);
          res.headers.set("X-Cache", "MISS");
          return res;
        }
        return await miss(c, key, policy, pageTags, seen);
      };
    },
  };
}

/** KV trouble costs the cache, never the response: one warning line. */
function reportKv(what: string) {
  return (error: unknown): undefined => {
    log("warn", `page cache: ${what} failed`, { error: String(error) });
    return undefined;
  };
}
