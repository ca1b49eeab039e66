/**
 * @module
 * How a request crosses from `deno task dev`'s front server (on the app's address) to the app's
 * server behind it (a child process on a loopback port), and arrives as the browser sent it.
 * Deno's `fetch` sets `Host` from the URL it fetches, and the child sees the front's address as
 * the client's: the front sends the request's own URL and client address along, and the child
 * puts them back - its host allow-list, its same-origin check for actions, redirects and the
 * failure screen's host then see the browser's request. Only requests carrying the session's
 * token are taken: nobody else reaching the loopback port can claim a host or an address.
 */

type Fetch = (req: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>;

const TOKEN = "x-dev-front-token";
const URL_HEADER = "x-dev-front-url";
const CLIENT = "x-dev-front-client";

/** The front's side: `req` (from `info`'s client) sent on to the server at `origin`. */
export function forward(
  req: Request,
  info: Deno.ServeHandlerInfo,
  origin: string,
  token: string,
): Promise<Response> {
  const url = new URL(req.url);
  const headers = new Headers(req.headers);
  headers.set(TOKEN, token);
  headers.set(URL_HEADER, req.url);
  headers.set(CLIENT, JSON.stringify(info.remoteAddr));
  // Deno's `fetch` decodes a compressed answer but keeps its `Content-Encoding`: ask for none.
  headers.set("Accept-Encoding", "identity");
  return fetch(origin + url.pathname + url.search, {
    method: req.method,
    headers,
    body: req.body,
    redirect: "manual",
    signal: req.signal,
  });
}

/** The server's side: `fetch` gets each request from the front as the browser sent it. */
export function behindDevFront(fetch: Fetch, token: string): Fetch {
  return (req, info) => {
    if (req.headers.get(TOKEN) !== token) {
      return new Response("This server answers through deno task dev's address.", { status: 421 });
    }
    const headers = new Headers(req.headers);
    for (const name of [TOKEN, URL_HEADER, CLIENT]) headers.delete(name);
    const original = new Request(req.headers.get(URL_HEADER)!, {
      method: req.method,
      headers,
      body: req.body,
      redirect: req.redirect,
      signal: req.signal,
    });
    const remoteAddr: Deno.NetAddr = JSON.parse(req.headers.get(CLIENT)!);
    return fetch(original, { remoteAddr, completed: info.completed });
  };
}
