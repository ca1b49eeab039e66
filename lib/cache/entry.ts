/**
 * @module
 * A stored page: its body, its headers and validator, when it was rendered and the versions of its
 * tags then. The body is kept as rendered, with the render's own CSP nonce in it; each response
 * gets the nonce of its own request in its place (`bodyFor`), so no two responses share a nonce
 * and no nonce is ever replayed. The render's nonce is 128 random bits made for that render, so no
 * content the page shows could have carried it before the render made it. The trace meta tags of
 * the request that rendered it (`sentry-trace`, `baggage`) are taken out: a stored page starts
 * its own trace in the browser rather than join another request's.
 */

export interface StoredPage {
  /** The page's key (key.ts). */
  key: string;
  /** The body, nonce and all, with the trace meta tags removed. */
  body: Uint8Array<ArrayBuffer>;
  /** The render's CSP nonce, as it appears in `body`; empty when the body carries none. */
  nonce: string;
  etag: string;
  /** Headers of the render to answer with again (`Content-Type`, the app's own). */
  headers: [string, string][];
  /** ms since the epoch. */
  storedAt: number;
  maxAge: number;
  staleWhileRevalidate: number;
  /** Each tag's version when the render began. */
  tags: Record<string, number>;
}

/** A stored page in memory: split around its nonce, so a response is one copy. */
export interface HeldPage extends StoredPage {
  parts: Uint8Array[];
  /** Bytes it holds, for the memory layer's bound. */
  size: number;
  /** The headers its answers share, made at its first answer (page_cache.ts). */
  answers?: { for: object; hit: [string, string][]; stale: [string, string][] };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const TRACE_META = /<meta name="(?:sentry-trace|baggage)" content="[^"]*"\/>/g;

/** The rendered body as it is stored: trace meta tags out. */
export function storedBody(rendered: Uint8Array): Uint8Array<ArrayBuffer> {
  return encoder.encode(decoder.decode(rendered).replace(TRACE_META, ""));
}

export function held(page: StoredPage): HeldPage {
  const parts = page.nonce
    ? decoder.decode(page.body).split(page.nonce).map((part) => encoder.encode(part))
    : [page.body];
  const size = page.body.byteLength + page.key.length * 2 + 512;
  return { ...page, parts, size };
}

/** The body for a response whose CSP nonce is `nonce` (base64: one byte a character). */
export function bodyFor(page: HeldPage, nonce: string): Uint8Array<ArrayBuffer> {
  const { parts } = page;
  if (parts.length === 1) return page.body;
  const out = new Uint8Array(
    page.body.byteLength + (nonce.length - page.nonce.length) * (parts.length - 1),
  );
  out.set(parts[0]);
  let at = parts[0].length;
  for (let i = 1; i < parts.length; i++) {
    at += encoder.encodeInto(nonce, out.subarray(at)).written;
    out.set(parts[i], at);
    at += parts[i].length;
  }
  return out;
}
