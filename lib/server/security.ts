/**
 * @module
 * What every response carries: the security headers, with a CSP whose `script-src` admits our own
 * origin and the request's fresh nonce (every inline script we emit carries it; read it with
 * `nonceOf`), and `X-Request-Id` — the client's or proxy's own when it sends a sane one, else a
 * new UUID (kept in the request's private record, `internals.ts`, for logs and reports).
 *
 * Not `hono/secure-headers` and `hono/request-id`, whose behaviour this keeps: per request they
 * rebuild the CSP from its directives, copy the header table and take two middleware hops, which
 * together cost about a tenth of a page's CPU (measured, see docs/performance.md). Here the
 * headers and the text around the nonce are made once, and a request costs a nonce, an id and
 * setting them.
 */
import type { Context, MiddlewareHandler } from "hono";
import { internalsOf } from "./internals.ts";

declare module "./internals.ts" {
  interface Internals {
    /** The request's id: in every log line of the request and in `X-Request-Id`. */
    requestId: string;
    /** The request's CSP nonce (`nonceOf`). */
    nonce: string;
  }
}

/** The headers every response gets whatever it set itself, in the order they are set. */
const HEADERS: [string, string][] = [
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

/** An incoming id is kept when it is short and made of these characters (as `hono/request-id`). */
const SANE_ID = /^[\w\-=]{1,255}$/;

/** `connectSources`: origins beyond our own the browser may send to (telemetry). */
export function securityHeaders(connectSources: string[] = []): MiddlewareHandler {
  const [beforeNonce, afterNonce] = [
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
  return async function securityHeaders(c, next) {
    const nonce = newNonce();
    const incoming = c.req.raw.headers.get("X-Request-Id");
    const id = incoming && SANE_ID.test(incoming) ? incoming : crypto.randomUUID();
    internalsOf(c).nonce = nonce;
    internalsOf(c).requestId = id;
    await next();
    const { headers } = c.res;
    headers.set("Content-Security-Policy", beforeNonce + nonce + afterNonce);
    for (const [name, value] of HEADERS) headers.set(name, value);
    headers.set("X-Request-Id", id);
  };
}

export function nonceOf(c: Context): string {
  return internalsOf(c).nonce!;
}

const random = new Uint8Array(16);

/** 128 random bits, base64: the CSP nonce. */
function newNonce(): string {
  crypto.getRandomValues(random);
  return btoa(String.fromCharCode(...random));
}
