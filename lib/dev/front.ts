/**
 * @module
 * The dev server's HTTP side, on the app's address. It answers the event stream, stack mapping
 * and the browser build's outputs (from memory) itself; every other request goes on to the app's
 * server (`forwarding.ts`), or gets the error page while the app cannot run, and a page gets the
 * dev client (`inject.ts`) with the version of the code that made it. Stack mapping takes posts
 * from the dev client's own pages only (`Origin` is the dev server's: a page elsewhere could post
 * `text/plain` without asking) and at most `MAX_STACK` bytes of them. Only requests for the hosts
 * of `hosts.ts` are answered at all: a page elsewhere reaches loopback by DNS rebinding.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getMimeType } from "hono/utils/mime";
import { CLIENT_PATH, EVENTS_PATH, STACK_PATH } from "../client/dev/protocol.ts";
import type { Backends } from "./backend.ts";
import { errorPage } from "./error_page.ts";
import type { DevEvents } from "./events.ts";
import { forward } from "./forwarding.ts";
import { devHosts, UNKNOWN_DEV_HOST } from "./hosts.ts";
import { devClientTag, withDevClient } from "./inject.ts";

export interface FrontOptions {
  session: string;
  /** Proves to the app's server that a request comes from this front. */
  token: string;
  events: DevEvents;
  backends: Backends;
  /** A browser build output by URL path. */
  asset(path: string): Promise<Uint8Array | undefined>;
  mapStack(stack: string): string;
  /** Whether the app's server's validators for a path (a changed stylesheet) are out of date. */
  stale(path: string): boolean;
  /** `Hello.styles` as it is now: a page made now has every swap made so far. */
  styleSwaps(): number;
  /** The hosts of `APP_ORIGIN` and `ALLOWED_HOSTS`, answered beside loopback and IP addresses. */
  hosts?: string[];
}

type Fetch = (req: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>;

/** A browser's stack is a few kilobytes. */
const MAX_STACK = 64 * 1024;

export function devFront(options: FrontOptions): Fetch {
  const { session, token, events, backends } = options;
  // Within a session a URL is one content: hashed names, and the rest built once per session.
  const etag = `W/"${session}"`;
  const app = new Hono<{ Bindings: Deno.ServeHandlerInfo }>();

  app.get(EVENTS_PATH, (c) => events.serve(c));
  app.post(
    STACK_PATH,
    (c, next) => {
      const origin = c.req.header("origin");
      return origin === new URL(c.req.url).origin ? next() : c.text("Forbidden", 403);
    },
    bodyLimit({ maxSize: MAX_STACK }),
    async (c) => c.text(options.mapStack(await c.req.text())),
  );
  app.get("/_app/*", async (c) => {
    const body = await options.asset(c.req.path);
    if (!body) return c.notFound();
    const headers = { "Cache-Control": "no-cache", ETag: etag };
    if (c.req.header("If-None-Match") === etag) return c.body(null, 304, headers);
    const type = getMimeType(c.req.path.replace(/\.map$/, ".json")) ?? "application/octet-stream";
    return c.body(body as Uint8Array<ArrayBuffer>, 200, { ...headers, "Content-Type": type });
  });
  app.all("*", async (c) => {
    const req = options.stale(c.req.path) ? unconditional(c.req.raw) : c.req.raw;
    for (;;) {
      const backend = await backends.current();
      const tag = devClientTag(
        `${CLIENT_PATH}?session=${session}&version=${backend.version}&styles=${options.styleSwaps()}`,
      );
      if (!("origin" in backend)) return errorPage(backend.title, backend.details, tag);
      try {
        return withDevClient(req, await forward(req, c.env, backend.origin, token), tag);
      } catch (error) {
        if (req.signal.aborted) return new Response(null, { status: 499 });
        // The server was being replaced: a request without a body can go to the new one.
        if (!req.body && await backends.current() !== backend) continue;
        return errorPage("The app's server did not answer", String(error), tag);
      }
    }
  });
  const allowed = devHosts(options.hosts);
  return (req, info) =>
    allowed(req.url) ? app.fetch(req, info) : new Response(UNKNOWN_DEV_HOST, {
      status: 400,
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    });
}

/** `req` without its validators, so that the answer is the file as it is now, never a 304. */
function unconditional(req: Request): Request {
  const headers = new Headers(req.headers);
  headers.delete("If-None-Match");
  headers.delete("If-Modified-Since");
  return new Request(req, { headers });
}
