/**
 * @module
 * Responses the app makes (pages, error pages, JSON, any compressible text) compressed as the
 * client's `Accept-Encoding` asks - brotli or gzip, q-values honoured - and still streamed.
 *
 * Two ways, chosen per response by what its body does. What a body has ready within one task (a
 * page with nothing left to suspend, JSON) is compressed in one call (`node:zlib`'s sync gzip at 6,
 * brotli at quality 5 with the size as a hint): a compressor set up per response and fed chunk by
 * chunk cost 5-8× the CPU (measured: `/list` with brotli fell to 0.12× of its uncompressed req/s
 * through `CompressionStream`). A body that is still coming after that task (Suspense boundaries
 * pending, a handler's own stream) goes through Deno's `CompressionStream`, which flushes after
 * every chunk it is given: the shell leaves compressed before the boundaries resolve, and each
 * streamed part follows as React writes it.
 *
 * Not `hono/compress`: it offers gzip and deflate only (no brotli, for clients that prefer it),
 * reads an unparseable q-value (`gzip;q=abc`) as 1, and sets a compressor up per response and
 * feeds it chunk by chunk, which costs several times the CPU of one call (below). What it skips is
 * kept: HEAD, 204/206/304, an encoded body, `no-transform`, types that do not compress, bodies of
 * known length under a threshold.
 *
 * Event streams are never compressed (their type is not compressible: an event must leave when it
 * is written). Static files and the build's assets are not this module's: they are served before
 * it, the assets precompressed at build time.
 */
import { COMPRESSIBLE_CONTENT_TYPE_REGEX } from "hono/compress";
import type { Context } from "hono";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

/** A content coding this module produces, by its `Accept-Encoding` name. */
export type ContentCoding = "br" | "gzip";

/** `CompressionStream`'s name for each coding. */
const FORMAT: Record<ContentCoding, CompressionFormat> = {
  br: "brotli" as CompressionFormat,
  gzip: "gzip",
};

/** A whole body compressed in one call (as the page cache holds its pages, too). */
export function compressAtOnce(
  bytes: Uint8Array,
  coding: ContentCoding,
): Uint8Array<ArrayBuffer> {
  const out = AT_ONCE[coding](bytes) as Uint8Array<ArrayBuffer>;
  // A small result is a view of node:zlib's 16 KiB output chunk: kept (a held page), the whole
  // chunk would stay, uncounted. Copied, it holds only its bytes (a Buffer's `slice` is a view).
  return out.byteLength === out.buffer.byteLength ? out : new Uint8Array(out);
}

const AT_ONCE: Record<ContentCoding, (bytes: Uint8Array) => Uint8Array> = {
  // Quality 5: past it brotli gets slower fast for little gain (11, its default, is 100× slower).
  br: (bytes) =>
    brotliCompressSync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 5,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  gzip: (bytes) => gzipSync(bytes),
};

/**
 * Compressed in one call only up to this: a body larger than this when ready at once is streamed,
 * so that no single response holds the event loop for long.
 */
const AT_ONCE_MAX_BYTES = 256 * 1024;
/**
 * Nor more chunks than this: chunks ready within one task are read without a pause, so a body of
 * endless empty (or one-byte) chunks would hold the event loop for as long as it went on. A page
 * of React's comes in a few hundred at most.
 */
const AT_ONCE_MAX_CHUNKS = 4096;

/**
 * A body of known length below this goes as it is: compressed, a few hundred bytes would shrink
 * by less than the header and framing cost, and still take a compressor's setup.
 */
export const COMPRESSIBLE_MIN_BYTES = 1024;

/**
 * Longer `Accept-Encoding` values are not read: a browser's is some 30 bytes (`gzip, deflate, br,
 * zstd`), and no client needs kilobytes to say which codings it takes. Such a request gets the
 * body as it is - always acceptable - and no parsing work in proportion to what it sent.
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
 * prefers by q-value (gzip on a tie: half brotli's CPU), or `undefined` for the body as it is - no
 * header, none of them acceptable (`q=0`, an unparseable q-value counts as 0), `identity` preferred
 * over both, or a value too long to be a client's.
 *
 * @example
 * ```ts
 * negotiateEncoding("gzip, deflate, br, zstd"); // "gzip"
 * negotiateEncoding("br, gzip;q=0.8"); // "br"
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
  // On a tie (browsers send both at q=1), gzip: it costs half the CPU of brotli at quality 5
  // (docs/performance.md) for pages about 15 % larger; a client that prefers brotli gets it.
  const best: ContentCoding = brQ > gzipQ ? "br" : "gzip";
  const bestQ = Math.max(brQ, gzipQ);
  // Only a preference the client states for `identity` competes; unlisted, it is the fallback.
  if (bestQ === 0 || (identity !== undefined && identity > bestQ)) return undefined;
  return best;
}

/**
 * Whether `res` is of a kind to compress, the request aside: a compressible type, not encoded
 * already, not marked `no-transform`, a status with a whole body, not known to be small.
 */
function compressible(res: Response): boolean {
  if (NOT_COMPRESSED.has(res.status)) return false;
  const { headers } = res;
  const type = headers.get("Content-Type");
  if (!type || !COMPRESSIBLE_CONTENT_TYPE_REGEX.test(type)) return false;
  if (headers.has("Content-Encoding")) return false;
  const cacheControl = headers.get("Cache-Control");
  if (cacheControl && NO_TRANSFORM.test(cacheControl)) return false;
  const length = headers.get("Content-Length");
  return length === null || !(Number(length) < COMPRESSIBLE_MIN_BYTES);
}

/** Adds `Accept-Encoding` to `Vary`, keeping what other middleware put there. */
function varyOnEncoding(headers: Headers): void {
  const vary = headers.get("Vary");
  if (vary && VARIES_ON_ENCODING.test(vary)) return;
  headers.append("Vary", "Accept-Encoding");
}

const LATER = Symbol("later");
type Bytes = Uint8Array<ArrayBuffer>;

/**
 * `body` compressed: in one call when all of it is there within this task (and not large), else as
 * a stream, flushed chunk by chunk, from what was read so far on.
 */
async function compress(
  body: ReadableStream<Bytes>,
  coding: ContentCoding,
): Promise<BodyInit> {
  const reader = body.getReader();
  const parts: Bytes[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const later = new Promise<typeof LATER>((resolve) => timer = setTimeout(resolve, 0, LATER));
  try {
    for (;;) {
      const next = reader.read();
      const result = await Promise.race([next, later]);
      if (
        result === LATER ||
        (!result.done &&
          (size + result.value.length > AT_ONCE_MAX_BYTES || parts.length >= AT_ONCE_MAX_CHUNKS))
      ) {
        return streamed(reader, parts, result === LATER ? next : Promise.resolve(result), coding);
      }
      if (result.done) break;
      parts.push(result.value);
      size += result.value.length;
    }
  } finally {
    clearTimeout(timer);
  }
  const whole: Bytes = parts.length === 1 ? parts[0] : new Uint8Array(size);
  if (parts.length !== 1) {
    let at = 0;
    for (const part of parts) {
      whole.set(part, at);
      at += part.length;
    }
  }
  return compressAtOnce(whole, coding);
}

/** What was read, the pending read, then the rest of `reader`, through a `CompressionStream`. */
function streamed(
  reader: ReadableStreamDefaultReader<Bytes>,
  parts: Bytes[],
  pending: Promise<ReadableStreamReadResult<Bytes>>,
  coding: ContentCoding,
): ReadableStream<Bytes> {
  let next: Promise<ReadableStreamReadResult<Bytes>> | undefined = pending;
  const source = new ReadableStream<Bytes>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
    },
    async pull(controller) {
      const result = await (next ?? reader.read());
      next = undefined;
      if (result.done) controller.close();
      else controller.enqueue(result.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return source.pipeThrough(new CompressionStream(FORMAT[coding]));
}

/**
 * The request's response compressed per `Accept-Encoding` (see the module's comment), once it has
 * one: called by the app's request frame (`frame.ts`) unless `AppOptions.compress` is `false`.
 * Undefined when the response stays as it is, decided within the call: most requests (a page
 * asked without `Accept-Encoding`, a JSON body under the threshold) pay no promise and no turn.
 */
export function compressResponse(c: Context): Promise<void> | undefined {
  const res = c.res;
  if (!compressible(res)) return;
  // HEAD too: its headers are GET's, bar the coding of a body it does not have.
  varyOnEncoding(res.headers);
  if (c.req.method === "HEAD") return;
  const coding = negotiateEncoding(c.req.raw.headers.get("Accept-Encoding"));
  // `res.body` only now: reading it turns a body of bytes into a stream, which Deno then
  // serves chunk by chunk instead of in one write (a page cache hit lost a third of its req/s).
  if (!coding || !res.body) return;
  return compressBody(c, res, res.body, coding);
}

async function compressBody(
  c: Context,
  res: Response,
  body: ReadableStream<Bytes>,
  coding: ContentCoding,
): Promise<void> {
  c.res = new Response(await compress(body, coding), res);
  // After Hono's `c.res` setter, which copies the old response's headers onto the new one.
  const { headers } = c.res;
  headers.delete("Content-Length");
  headers.set("Content-Encoding", coding);
  // Another coding is another representation: a strong validator may name only one of them.
  const etag = headers.get("ETag");
  if (etag && !etag.startsWith("W/")) headers.set("ETag", `W/${etag}`);
}
