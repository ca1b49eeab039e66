/**
 * @module
 * HEAD answered exactly like GET, without the body. Hono answers HEAD with GET's headers and a
 * null body, for which Deno announces `Content-Length: 0`; a page streams, so GET's length is
 * unknown, and a HEAD response may give a length only if it is GET's. An empty stream announces
 * none. A status that never has a body (204, 304) keeps its null body. Runs outside Hono, around
 * its `fetch`; other methods pass straight through.
 */

type Fetch = (req: Request, info?: Deno.ServeHandlerInfo) => Response | Promise<Response>;

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export function withHonestHead(fetch: Fetch): Fetch {
  return (req, info) => req.method === "HEAD" ? head(fetch, req, info) : fetch(req, info);
}

async function head(fetch: Fetch, req: Request, info?: Deno.ServeHandlerInfo): Promise<Response> {
  const res = await fetch(req, info);
  if (res.headers.has("Content-Length") || NULL_BODY_STATUS.has(res.status)) return res;
  return new Response(new ReadableStream({ start: (controller) => controller.close() }), res);
}
