/**
 * @module
 * A stored page: its body, its headers and validator, when it was rendered and the versions of its
 * tags then. The trace meta tags of the request that rendered it (`sentry-trace`, `baggage`) are
 * taken out: a stored page starts its own trace in the browser rather than join another request's.
 * So are its forms' submission keys (`actions/once.ts`): a key is one render's, for one visitor,
 * and a key every visitor got would make two visitors' same posts one submission - the second
 * skipped, and answered with the first's outcome. A form of a stored page is posted without a key
 * (with JavaScript, the stub makes one per call).
 *
 * The body is kept, and served, as rendered: its scripts carry the CSP nonce of its render, and
 * every response of it names that nonce in its `Content-Security-Policy`. That is what lets a hit
 * be bytes held already - the same bytes for everyone, compressed once per coding when the page is
 * held (`held`), not per response: with a nonce of its own each response had to be copied, and
 * compressed whole again (docs/performance.md). What it gives up, and why that is safe enough:
 *
 * - A nonce proves a script was put there by the server when it made *that* response. The stored
 *   bytes never change after the render, and the render's nonce is 128 fresh random bits no content
 *   could have known before it: nothing an attacker stores (a comment, a title) can carry it into
 *   the page, and the page cannot be made to say anything else while it is stored.
 * - Anyone can read the nonce, though, by asking for the page (it is public: no session ever
 *   reaches the shared cache). A DOM-based injection into that page - script of the page copying
 *   attacker-chosen markup into a script element it makes - could then name the nonce, which a
 *   per-response nonce would have kept secret. The nonce lives as long as the stored page (`maxAge`
 *   and `staleWhileRevalidate`); each render draws a new one; other pages, and every page that is
 *   not served from the cache, keep a nonce per response. docs/security.md says so to the team.
 */
import type { HitHeaders } from "./answer.ts";
import { ONCE_FIELD } from "../shared/action_wire.ts";
import {
  compressAtOnce,
  COMPRESSIBLE_MIN_BYTES,
  type ContentCoding,
} from "../server/compression.ts";

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

/** A stored page in this process's memory, with its body compressed in each coding. */
export interface HeldPage extends StoredPage {
  /** The body in each content coding; none for a body too small to gain from it. */
  encoded?: Record<ContentCoding, Uint8Array<ArrayBuffer>>;
  /** Bytes it holds, for the memory layer's bound. */
  size: number;
  /** The headers its answers share, made at its first answer (answer.ts). */
  answers?: { for: object; headers: [string, string][] };
  /** Its hits' whole header lists, made at its first hit ahead of the middleware (answer.ts). */
  hits?: HitHeaders;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const TRACE_META = /<meta name="(?:sentry-trace|baggage)" content="[^"]*"\/>/g;
/** A form's submission key as React writes the field (`registry.ts` makes it: a UUID). */
const SUBMISSION_KEY = new RegExp(
  `<input type="hidden" name="${ONCE_FIELD.replace("$", "\\$")}" value="[0-9a-f-]{36}"/>`,
  "g",
);

/** The rendered body as it is stored: trace meta tags and submission keys out. */
export function storedBody(rendered: Uint8Array): Uint8Array<ArrayBuffer> {
  return encoder.encode(
    decoder.decode(rendered).replace(TRACE_META, "").replace(SUBMISSION_KEY, ""),
  );
}

/**
 * `page` as this process holds it; with `compress`, its body compressed once per coding here
 * (about 2 ms for a 50 KB page) rather than once per response.
 */
export function held(page: StoredPage, compress: boolean): HeldPage {
  const encoded = compress && page.body.byteLength >= COMPRESSIBLE_MIN_BYTES
    ? { br: compressAtOnce(page.body, "br"), gzip: compressAtOnce(page.body, "gzip") }
    : undefined;
  const size = page.body.byteLength + (encoded?.br.byteLength ?? 0) +
    (encoded?.gzip.byteLength ?? 0) + page.key.length * 2 + 512;
  return { ...page, encoded, size };
}
