/**
 * @module
 * HEAD responses that claim no false length. Hono answers HEAD with GET's headers and a null body,
 * for which Deno announces `Content-Length: 0`; a page streams, so GET's length is unknown, and a
 * HEAD response may give a length only if it is GET's. An empty stream announces none. Runs outside
 * Hono, around its `fetch`; other methods pass straight through.
 */

type Fetch = (req: Request, info?: Deno.ServeHandlerInfo) => Response | Promise<Response>;

export function withHonestHead(fetch: Fetch): Fetch {
  return (req, info) => req.method === "HEAD" ? head(fetch, req, info) : fetch(req, info);
}

async function head(fetch: Fetch, req: Request, info?: Deno.ServeHandlerInfo): Promise<Response> {
  const res = await fetch(req, info);
  if (res.headers.has("Content-Length")) return res;
  return new Response(new ReadableStream({ start: (controller) => controller.close() }), res);
}
