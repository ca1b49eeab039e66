/**
 * @module
 * Every page `deno task dev` serves carries its client (`client/dev/client.ts`): whatever answered
 * - a route, a middleware's 401, the not-found page, a failure screen - reloads after a save. The
 * tag goes right after `<head>` (an async module: it runs while the page still streams, and a
 * failure screen that replaces the document later does not stop it), or at the end of a document
 * without one. A plain-text answer to a navigation (`hono/basic-auth`'s 401) becomes the same text
 * in an HTML page, as the browser would show it, so that it can carry the tag too. Same-origin
 * scripts pass the app's CSP (`'self'`), so the tag needs no nonce.
 */
import { escapeHtml } from "../errors/screen.ts";

/** How far into a document `<head>` is looked for before the tag goes at the end instead. */
const SEARCH_BYTES = 16 * 1024;
const HEAD = /<head\b[^>]*>/i;

export function devClientTag(src: string): string {
  return `<script type="module" async src="${escapeHtml(src)}"></script>`;
}

/** `res` with the tag, when a browser shows it as a page; as it is otherwise. */
export function withDevClient(req: Request, res: Response, tag: string): Response {
  const type = res.headers.get("Content-Type") ?? "";
  const encoded = (res.headers.get("Content-Encoding") ?? "identity") !== "identity";
  if (!res.body || encoded || !isPage(req)) return res;
  if (/^text\/html\b/i.test(type)) return rewritten(res, res.body.pipeThrough(afterHead(tag)));
  if (/^text\/plain\b/i.test(type)) {
    const headers = new Headers(res.headers);
    headers.set("Content-Type", "text/html; charset=utf-8");
    return rewritten(res, res.body.pipeThrough(asHtmlPage(tag)), headers);
  }
  return res;
}

/**
 * A browser loading a page, not a script fetching something; without `Sec-Fetch-*` (plain HTTP
 * off localhost), one asking for HTML.
 */
function isPage(req: Request): boolean {
  const dest = req.headers.get("Sec-Fetch-Dest");
  if (dest !== null) return dest === "document" || dest === "iframe";
  return req.headers.get("Accept")?.includes("text/html") ?? false;
}

function rewritten(res: Response, body: ReadableStream<Uint8Array>, headers = res.headers) {
  const copy = new Headers(headers);
  copy.delete("Content-Length");
  return new Response(body, { status: res.status, statusText: res.statusText, headers: copy });
}

/** Inserts `tag` after the document's `<head>`, or at its end if none comes early. */
function afterHead(tag: string): TransformStream<Uint8Array, Uint8Array> {
  const encoder = new TextEncoder();
  // windows-1252 maps each byte to one character, so string offsets are byte offsets; the tag
  // and `<head>` are ASCII, which UTF-8 never uses inside a multi-byte character.
  const decoder = new TextDecoder("windows-1252");
  let state: "searching" | "inserted" | "at-end" = "searching";
  let start: Uint8Array = new Uint8Array();
  return new TransformStream({
    transform(chunk, controller) {
      if (state !== "searching") return controller.enqueue(chunk);
      start = concat(start, chunk);
      const head = HEAD.exec(decoder.decode(start));
      if (head) {
        const at = head.index + head[0].length;
        controller.enqueue(start.subarray(0, at));
        controller.enqueue(encoder.encode(tag));
        controller.enqueue(start.subarray(at));
        state = "inserted";
      } else if (start.length > SEARCH_BYTES) {
        controller.enqueue(start);
        state = "at-end";
      }
    },
    flush(controller) {
      if (state === "searching") controller.enqueue(start);
      if (state !== "inserted") controller.enqueue(encoder.encode(tag));
    },
  });
}

function asHtmlPage(tag: string): TransformStream<Uint8Array, Uint8Array> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return new TransformStream({
    start(controller) {
      controller.enqueue(encoder.encode(
        `<!DOCTYPE html><html><head>${tag}<meta charset="utf-8"></head><body>` +
          `<pre style="word-wrap:break-word;white-space:pre-wrap">`,
      ));
    },
    transform(chunk, controller) {
      controller.enqueue(encoder.encode(escapeHtml(decoder.decode(chunk, { stream: true }))));
    },
    flush(controller) {
      controller.enqueue(encoder.encode(`${escapeHtml(decoder.decode())}</pre></body></html>`));
    },
  });
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(a.length + b.length);
  bytes.set(a);
  bytes.set(b, a.length);
  return bytes;
}
