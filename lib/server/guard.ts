/**
 * @module
 * Turns away, with 400, a request whose URL cannot be parsed — a `Host` header such as
 * `<script>`, `a b` or a port past 65535 makes `req.url` unparseable, and everything after this
 * (request id, routes, the failure screen itself) takes a valid URL for granted. Runs before Hono.
 */

type Fetch = (req: Request, info?: Deno.ServeHandlerInfo) => Response | Promise<Response>;

export function rejectInvalidUrls(fetch: Fetch): Fetch {
  return (req, info) =>
    URL.canParse(req.url) ? fetch(req, info) : new Response("Bad Request", {
      status: 400,
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    });
}
