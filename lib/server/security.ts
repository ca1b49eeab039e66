/**
 * @module
 * What every response carries: the security headers, with a CSP whose `script-src` admits our own
 * origin and the request's fresh nonce (every inline script we emit carries it; read it with
 * `nonceOf`), and `X-Request-Id` - the client's or proxy's own when it sends a sane one, else a
 * new UUID (kept in the request's private record, `internals.ts`, for logs and reports).
 *
 * Not `hono/secure-headers` and `hono/request-id`, whose behaviour this keeps: per request they
 * rebuild the CSP from its directives, copy the header table and take two middleware hops, which
 * together cost about a tenth of a page's CPU (measured, see docs/performance.md). Here the
 * headers and the text around the nonce are made once, and a request costs a nonce, an id and
 * setting them. A response made whole in one go (the page cache's hits) takes them in its
 * constructor from `securityHeaderList` instead: setting headers on a finished response makes Deno
 * throw away the native response it prepared and build it again.
 */
import type { Context } from "hono";
import { internalsOf } from "./internals.ts";

declare module "./internals.ts" {
  interface Internals {
    /** The request's id: in every log line of the request and in `X-Request-Id`. */
    requestId: string;
    /** The request's CSP nonce (`nonceOf`). */
    nonce: string;
    /** The CSP's text around the nonce, for `securityHeaderList`. */
    csp: readonly [string, string];
    /** The CSP `securityHeaderList` gave: a response that still carries it needs nothing more. */
    secured: string;
    /** A 304 for a page the browser keeps: no CSP, which would replace the kept page's nonce. */
    keptPage: true;
  }
}

/** The headers every response gets whatever it set itself (bar the CSP and the request id). */
export const FIXED_HEADERS: readonly [string, string][] = [
  ["Cross-Origin-Opener-Policy", "same-origin"],
  ["Cross-Origin-Resource-Policy", "same-origin"],
  ["Origin-Agent-Cluster", "?1"],
  ["Referrer-Policy", "strict-origin-when-cross-origin"],
  ["X-Content-Type-Options", "nosniff"],
  // Left out: HSTS, which belongs to the deployment (browsers upgrade on their own where it
  // matters); what browsers and plug-ins long gone read (IE's download prompt and XSS auditor,
  // Flash's cross-domain policies); X-Frame-Options, superseded by `frame-ancestors` in every
  // browser with CSP Level 2; and DNS prefetch control, a speed setting, not a security one.
];

/** The names `securityHeaderList` gives, lower-cased: a stored response keeps none of them. */
export const SECURITY_HEADER_NAMES: ReadonlySet<string> = new Set(
  ["content-security-policy", ...FIXED_HEADERS.map(([name]) => name.toLowerCase()), "x-request-id"],
);

/** An incoming id is kept when it is short and made of these characters (as `hono/request-id`). */
const SANE_ID = /^[\w\-=]{1,255}$/;

/**
 * The CSP's text before and after the nonce; `connectSources`: origins beyond our own the browser
 * may send to (telemetry).
 */
export function cspAround(connectSources: string[] = []): readonly [string, string] {
  return [
    "default-src 'self'; script-src 'self' 'nonce-",
    "'; " + [
      // Islands sit in `display:contents` elements styled inline.
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data:",
      ["connect-src 'self'", ...connectSources].join(" "),
      "object-src 'none'",
      "base-uri 'self'",
      "form-action 'self'",
      "frame-ancestors 'self'",
    ].join("; "),
  ];
}

/** The request's id: the client's or proxy's own when it sends a sane one, else a new UUID. */
export function requestIdOf(req: Request): string {
  const incoming = req.headers.get("X-Request-Id");
  return incoming && SANE_ID.test(incoming) ? incoming : crypto.randomUUID();
}

/**
 * The request's nonce and id, before anything answers it (the app's request frame, `frame.ts`);
 * `csp` as `cspAround` made it, once per app.
 */
export function secureRequest(c: Context, csp: readonly [string, string]): void {
  const internals = internalsOf(c);
  internals.nonce = newNonce();
  internals.requestId = requestIdOf(c.req.raw);
  internals.csp = csp;
}

/** The security headers and the request id on the request's response, once it has one. */
export function secureResponse(c: Context): void {
  const internals = internalsOf(c);
  const { headers } = c.res;
  // Made with `securityHeaderList` and still carrying its CSP (a fresh nonce nobody else knows).
  if (internals.secured && headers.get("Content-Security-Policy") === internals.secured) return;
  // Not on a page's 304: the browser keeps the page it has, whose scripts carry that page's
  // nonce. The nonce is read back: a page the cache rendered for this request carries the render's.
  if (!(internals.keptPage && c.res.status === 304)) {
    const [beforeNonce, afterNonce] = internals.csp!;
    headers.set("Content-Security-Policy", beforeNonce + internals.nonce + afterNonce);
  }
  for (const [name, value] of FIXED_HEADERS) headers.set(name, value);
  headers.set("X-Request-Id", internals.requestId!);
}

export function nonceOf(c: Context): string {
  return internalsOf(c).nonce!;
}

/**
 * Every header the middleware would set on the request's response, for a response made whole at
 * once (a status other than 304): the middleware then leaves it as it is.
 */
export function securityHeaderList(c: Context): [string, string][] {
  const internals = internalsOf(c);
  const [before, after] = internals.csp!;
  const csp = before + internals.nonce + after;
  internals.secured = csp;
  return [["Content-Security-Policy", csp], ...FIXED_HEADERS, [
    "X-Request-Id",
    internals.requestId!,
  ]];
}

/**
 * A nonce's 16 random bytes sit in a slot of 18 whose last two are zero: base64 writes a slot in
 * 24 characters, the first 22 of which are the 16 bytes' own base64 (then `==`).
 */
const SLOT_BYTES = 18;
const SLOT_CHARS = 24;
/** Nonces drawn at a time: one call to the system's CSPRNG and one base64 encoding for 256. */
const BATCH = 256;
const random = new Uint8Array(SLOT_BYTES * BATCH);
let batch = "";
let used = BATCH;

/**
 * 128 random bits, base64: the CSP nonce. Each is drawn once and never used again; cut from one
 * base64 string per batch (encoding each apart cost more than the rest of this module's work).
 */
function newNonce(): string {
  if (used === BATCH) {
    crypto.getRandomValues(random);
    for (let slot = 0; slot < BATCH; slot++) {
      random.fill(0, SLOT_BYTES * slot + 16, SLOT_BYTES * (slot + 1));
    }
    batch = random.toBase64();
    used = 0;
  }
  const at = SLOT_CHARS * used++;
  return batch.slice(at, at + 22) + "==";
}
