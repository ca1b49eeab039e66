/**
 * @module
 * Responses the app makes (pages, error pages, JSON, any compressible text) compressed as the
 * client's `Accept-Encoding` asks — brotli or gzip, q-values honoured — and still streamed: Deno's
 * `CompressionStream` flushes after every chunk it is given, so a page's shell leaves compressed
 * before its Suspense boundaries resolve, and each streamed part follows as React writes it.
 *
 * Not `hono/compress`: it offers gzip and deflate only (no brotli, which today's browsers all
 * take and which makes pages some 20 % smaller than gzip), and reads an unparseable q-value
 * (`gzip;q=abc`) as 1. What it skips is kept: HEAD, 204/206/304, an encoded body, `no-transform`,
 * types that do not compress, bodies of known length under a threshold.
 *
 * Event streams are never compressed (their type is not compressible: an event must leave when it
 * is written). Static files and the build's assets are not this module's: they are served before
 * it, the assets precompressed at build time.
 */
import { COMPRESSIBLE_CONTENT_TYPE_REGEX } from "hono/compress";
import type { MiddlewareHandler } from "hono";

/** A content coding this module produces, by its `Accept-Encoding` name. */
export type ContentCoding = "br" | "gzip";

/** `CompressionStream`'s name for each coding. */
const FORMAT: Record<ContentCoding, CompressionFormat> = {
  br: "brotli" as CompressionFormat,
  gzip: "gzip",
};

/**
 * A body of known length below this goes as it is: compressed, a few hundred bytes would shrink
 * by less than the header and framing cost, and still take a compressor's setup.
 */
const MIN_BYTES = 1024;

/**
 * Longer `Accept-Encoding` values are not read: a browser's is some 30 bytes (`gzip, deflate, br,
 * zstd`), and no client needs kilobytes to say which codings it takes. Such a request gets the
 * body as it is — always acceptable — and no parsing work in proportion to what it sent.
 */
const MAX_ACCEPT_ENCODING = 256;

/** A q-value as HTTP defines it (RFC 9110, 12.4.2): 0 to 1, three decimals at most. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

const NO_TRANSFORM = /(?:^|,)\s*no-transform\s*(?:,|$)/i;
const VARIES_ON_ENCODING = /(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i;

/** Statuses whose response has no body to compress, or a partial one (206). */
const NOT_COMPRESSED = new Set([101, 103, 204, 205, 206, 304]);

/**
 * The coding to answer with for an `Accept-Encoding` value: brotli or gzip, whichever the client
 * prefers by q-value (brotli on a tie), or `undefined` for the body as it is — no header, none of
 * them acceptable (`q=0`, an unparseable q-value counts as 0), `identity` preferred over both, or
 * a value too long to be a client's.
 *
 * @example
 * ```ts
 * negotiateEncoding("gzip, deflate, br, zstd"); // "br"
 * negotiateEncoding("br;q=0.5, gzip"); // "gzip"
 * negotiateEncoding("*;q=0, identity"); // undefined
 * ```
 */
export function negotiateEncoding(header: string | null | undefined): ContentCoding | undefined {
  if (!header || header.length > MAX_ACCEPT_ENCODING) return undefined;
  let br: number | undefined;
  let gzip: number | undefined;
  let identity: number | undefined;
  let any: number | undefined;
  // The lowest q a coding is given wins: a client that says both `gzip` and `gzip;q=0` refuses it.
  const lowest = (known: number | undefined, q: number) =>
    known === undefined ? q : Math.min(known, q);
  for (const entry of header.split(",")) {
    const [name, ...params] = entry.split(";");
    let q = 1;
    for (const param of params) {
      const [key, value = ""] = param.split("=");
      if (key.trim().toLowerCase() !== "q") continue;
      const text = value.trim();
      q = QVALUE.test(text) ? Number(text) : 0;
    }
    switch (name.trim().toLowerCase()) {
      case "br":
        br = lowest(br, q);
        break;
      case "gzip":
      case "x-gzip":
        gzip = lowest(gzip, q);
        break;
      case "identity":
        identity = lowest(identity, q);
        break;
      case "*":
        any = lowest(any, q);
    }
  }
  const brQ = br ?? any ?? 0;
  const gzipQ = gzip ?? any ?? 0;
  const best: ContentCoding = brQ >= gzipQ ? "br" : "gzip";
  const bestQ = Math.max(brQ, gzipQ);
  // Only a preference the client states for `identity` competes; unlisted, it is the fallback.
  if (bestQ === 0 || (identity !== undefined && identity > bestQ)) return undefined;
  return best;
}

/**
 * Whether `res` is one to compress, `Vary` aside: a body the client will read (not HEAD's), of a
 * compressible type, not encoded already, and not marked `no-transform`.
 */
function compressible(method: string, res: Response): boolean {
  if (method === "HEAD" || !res.body || NOT_COMPRESSED.has(res.status)) return false;
  const { headers } = res;
  const type = headers.get("Content-Type");
  if (!type || !COMPRESSIBLE_CONTENT_TYPE_REGEX.test(type)) return false;
  if (headers.has("Content-Encoding")) return false;
  const cacheControl = headers.get("Cache-Control");
  if (cacheControl && NO_TRANSFORM.test(cacheControl)) return false;
  const length = headers.get("Content-Length");
  return length === null || !(Number(length) < MIN_BYTES);
}

/** Adds `Accept-Encoding` to `Vary`, keeping what other middleware put there. */
function varyOnEncoding(headers: Headers): void {
  const vary = headers.get("Vary");
  if (vary && VARIES_ON_ENCODING.test(vary)) return;
  headers.append("Vary", "Accept-Encoding");
}

/**
 * Compresses the responses below it per `Accept-Encoding` (see the module's comment). Mounted by
 * `createApp` unless `AppOptions.compress` is `false`.
 */
export function compression(): MiddlewareHandler {
  return async function compression(c, next) {
    await next();
    const res = c.res;
    if (!compressible(c.req.method, res)) return;
    varyOnEncoding(res.headers);
    const coding = negotiateEncoding(c.req.raw.headers.get("Accept-Encoding"));
    if (!coding) return;
    c.res = new Response(res.body!.pipeThrough(new CompressionStream(FORMAT[coding])), res);
    // After Hono's `c.res` setter, which copies the old response's headers onto the new one.
    const { headers } = c.res;
    headers.delete("Content-Length");
    headers.set("Content-Encoding", coding);
    // Another coding is another representation: a strong validator may name only one of them.
    const etag = headers.get("ETag");
    if (etag && !etag.startsWith("W/")) headers.set("ETag", `W/${etag}`);
  };
}
