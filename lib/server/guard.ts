/**
 * @module
 * Turns away, with 400, a request whose URL cannot be parsed - a `Host` header such as `<script>`,
 * `a b` or a port past 65535 makes `req.url` unparseable, and everything after this (request id,
 * routes, the failure screen itself) takes a valid URL for granted - and, when the app lists the
 * hosts it answers (`allowedHosts`), a request for any other: DNS rebinding (`Host: evil`) and
 * misrouted traffic never reach a route or an action. Host names are compared case-insensitively,
 * as DNS has them (`Host: APP.EXAMPLE` is `app.example`). A `Host` that is more than a host and a
 * port is turned away too: Deno writes it into `req.url` as sent, where `Host: app.example/admin`
 * made `/x` the path `/admin/x` (past a proxy's rules by path, and the list of hosts), and a `#`
 * or `?` hid from the URL parser the path Hono routes on. Runs before Hono. In dev the list adds to
 * what `deno task dev`'s front answers (localhost, IP addresses: `dev/hosts.ts`), as it does: the
 * name docs/dev.md has one add to reach the dev server from another machine took localhost away.
 */
import { devHosts } from "../dev/hosts.ts";

type Fetch = (req: Request, info?: Deno.ServeHandlerInfo) => Response | Promise<Response>;

/**
 * Names the settings to change, never their values: the first a test serving the app on
 * `127.0.0.1:port` meets is this, with the origin it gave for the page cache.
 */
const UNKNOWN_HOST = "unknown host; this app answers only the hosts of its origins " +
  "(APP_ORIGIN, createApp's origins) and ALLOWED_HOSTS (allowedHosts)";

/** What no host and port holds, and would change the URL's path, query or user. */
const NOT_A_HOST = /[/?#\\@]/;

export function guardRequests(fetch: Fetch, allowedHosts?: string[], dev = false): Fetch {
  const allowed = allowedHosts && new Set(allowedHosts.map((host) => host.toLowerCase()));
  const local = dev ? devHosts() : () => false;
  return (req, info) => {
    if (!URL.canParse(req.url)) return badRequest("the request's URL cannot be parsed");
    const host = req.headers.get("host");
    if (host !== null && NOT_A_HOST.test(host)) return badRequest("the Host header is not a host");
    if (allowed && !allowed.has(hostOf(req.url)) && !local(req.url)) {
      return badRequest(UNKNOWN_HOST);
    }
    return fetch(req, info);
  };
}

/**
 * `host[:port]` of an absolute URL, lower-cased: Deno's `req.url` carries the `Host` header as the
 * client wrote it, where the URL parser would have lower-cased it.
 */
function hostOf(url: string): string {
  const start = url.indexOf("//") + 2;
  const end = url.indexOf("/", start);
  return url.slice(start, end === -1 ? undefined : end).toLowerCase();
}

function badRequest(why: string): Response {
  return new Response(`Bad Request: ${why}`, {
    status: 400,
    headers: { "Content-Type": "text/plain; charset=utf-8" },
  });
}
