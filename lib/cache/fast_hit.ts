/**
 * @module
 * Hits ahead of the chain: a fresh page held in this process's memory answered at the top of the
 * app's `fetch` (after the URL and host guard), before Hono and its middleware - which cost a hit
 * about as much again as the answer itself (docs/performance.md). Anything else falls through to
 * the whole app, where the page cache answers as ever (page_cache.ts): a miss, a stale page, one
 * only in KV, a tag whose version is due for a check, a request with credentials, a body, or a
 * cookie of a session or a form posted without JavaScript.
 *
 * Only pages of routes with no `_middleware.ts` on their folders' chain are answered here, and
 * only once the whole app answered their URL from the cache (`learn`): a guard a team wrote (a
 * sign-in check, a maintenance redirect, an IP block, a header it sets) always runs, and a URL
 * something ahead of the routes answers (a static file, the build's assets) is never taken for a
 * page. What the app's middleware did for a hit is done here too, alike: the security headers
 * (the CSP naming the render's nonce), the request id, the request log line, and the telemetry's
 * record of the request (`Telemetry.hit`: the request's span named after the route, as its
 * middleware would); `answer.ts` makes each whole header list once per page, so a hit costs one
 * `Response` with its headers given to its constructor.
 */
import { parse } from "hono/utils/cookie";
import { getPath } from "hono/utils/url";
import { FORM_STATE_COOKIE } from "../actions/form_state.ts";
import { negotiateEncoding } from "../server/compression.ts";
import { logRequest } from "../server/request_log.ts";
import { requestIdOf } from "../server/security.ts";
import type { TraceIds } from "../server/telemetry.ts";
import { hitHeaders } from "./answer.ts";
import { matchesIfNoneMatch } from "./etag.ts";
import { canonicalUrl, keyWithVary } from "./key.ts";
import type { MemoryLayer } from "./memory.ts";
import type { ResolvedPolicy } from "./policy.ts";
import type { TagVersions } from "./tags.ts";

export interface FastHitsSetup {
  origin: string;
  memory: MemoryLayer;
  tags: TagVersions;
  /** Whether the app compresses: a page held uncompressed (small) is then the middleware's. */
  compress: boolean;
  /** Aborted once the app closes: every request then goes the whole way. */
  closing: AbortSignal;
  /** The app's CSP around the nonce (security.ts `cspAround`). */
  csp: readonly [string, string];
  /** Whether the app logs a line per request (`AppOptions.logRequests`). */
  logRequests: boolean;
  /** The ids of the active request's span, for its line (`Telemetry.requestIds`). */
  requestIds?: () => TraceIds | undefined;
  /** URLs remembered as pages answerable here; the oldest forgotten past it. */
  maxUrls: number;
  /** The telemetry's record of a hit (`Telemetry.hit`); false: the app answers it. */
  hit?: (req: Request, route: string) => boolean;
  /** Requests never answered here (the cache's own renders). */
  skip: (req: Request) => boolean;
}

/** A route with a cache policy and no middleware, as its URLs are learned: one object per route. */
export interface LearnedRoute {
  policy: ResolvedPolicy;
  /** Its pattern, as logs and traces name it (`/blog/:slug`). */
  route: string;
}

export interface FastHits {
  /** `url` (a canonical URL, key.ts) is a page of `route`. */
  learn(url: string, route: LearnedRoute): void;
  /** The response to `req` when it is a fresh hit held here; undefined: the app answers it. */
  answer(req: Request): Response | undefined;
}

/**
 * Cookie names that make a request bypass the cache: the session's (either scheme's), form state's.
 */
const SESSION_COOKIES = ["session", "__Host-session"];

export function fastHits(setup: FastHitsSetup): FastHits {
  const { origin, memory, tags, closing, csp } = setup;
  const pages = new Map<string, LearnedRoute>();

  return {
    learn(url, route) {
      if (pages.get(url) === route) return;
      pages.delete(url);
      if (pages.size >= setup.maxUrls) pages.delete(pages.keys().next().value!);
      pages.set(url, route);
    },

    answer(req) {
      if (closing.aborted || pages.size === 0) return undefined;
      const start = performance.now();
      const { method, headers } = req;
      if (method !== "GET" && method !== "HEAD") return undefined;
      if (
        headers.has("authorization") || headers.has("content-length") ||
        headers.has("transfer-encoding")
      ) return undefined;
      const cookie = headers.get("cookie");
      if (cookie !== null && carriesState(cookie)) return undefined;
      if (setup.skip(req)) return undefined;
      const url = canonicalUrl(origin, req.url);
      const learned = url === undefined ? undefined : pages.get(url);
      if (!learned) return undefined;
      const { policy } = learned;
      const key = policy.vary.length ? keyWithVary(url!, headers, policy.vary)?.key : url;
      const page = key === undefined ? undefined : memory.get(key);
      const now = Date.now();
      if (!page || now - page.storedAt >= page.maxAge * 1000) return undefined;
      if (setup.compress && !page.encoded) return undefined;
      const lists = hitHeaders(page, policy, csp);
      if (lists.tags.length > 0) {
        // A tag due for its check is read by the whole app, which joins the read begun here and
        // reports its failure.
        const reading = tags.fresh(lists.tags);
        if (reading) return void reading.catch(() => {});
        if (!tags.current(page.tags)) return undefined;
      }
      if (setup.hit && !setup.hit(req, learned.route)) return undefined;
      const age = String(Math.max(0, Math.floor((now - page.storedAt) / 1000)));
      const id = requestIdOf(req);
      const perRequest = (list: [string, string][]): [string, string][] => [
        ...list,
        ["Age", age],
        ["X-Request-Id", id],
      ];
      let res: Response;
      const ifNoneMatch = headers.get("if-none-match");
      if (ifNoneMatch !== null && matchesIfNoneMatch(ifNoneMatch, page.etag)) {
        res = new Response(null, { status: 304, headers: perRequest(lists.notModified) });
      } else if (method === "HEAD") {
        res = new Response(null, { headers: perRequest(lists.head) });
      } else {
        const coding = page.encoded && negotiateEncoding(headers.get("accept-encoding"));
        res = new Response(coding ? page.encoded![coding] : page.body, {
          headers: perRequest(lists.get[coding || "identity"]),
        });
      }
      if (setup.logRequests) {
        logRequest(method, getPath(req), res.status, start, id, setup.requestIds?.());
      }
      return res;
    },
  };
}

/** Whether `cookie` carries a session or a form's state: such a request is rendered for itself. */
function carriesState(cookie: string): boolean {
  // As restoreFormState reads it (lib/actions/form_state.ts): the name anywhere in the header.
  if (cookie.includes(FORM_STATE_COOKIE)) return true;
  return SESSION_COOKIES.some((name) => parse(cookie, name)[name] !== undefined);
}
