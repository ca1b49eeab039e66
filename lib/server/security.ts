/**
 * @module
 * Security headers (`hono/secure-headers`): a CSP whose `script-src` admits our own origin and the
 * request's fresh nonce, which every inline script we emit carries. Read the nonce with `nonceOf`.
 */
import type { Context, MiddlewareHandler } from "hono";
import { NONCE, secureHeaders } from "hono/secure-headers";

/** `connectSources`: origins beyond our own the browser may send to (telemetry). */
export const securityHeaders = (connectSources: string[] = []): MiddlewareHandler =>
  secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'", NONCE],
      // Islands sit in `display:contents` elements styled inline.
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", "data:"],
      connectSrc: ["'self'", ...connectSources],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'self'"],
    },
    referrerPolicy: "strict-origin-when-cross-origin",
    // Browsers upgrade to HTTPS on their own where it matters; HSTS belongs to the deployment.
    strictTransportSecurity: false,
    // Headers for browsers and plug-ins long gone (IE's download prompt and XSS auditor, Flash's
    // cross-domain policies) and what the CSP already says (`frame-ancestors` supersedes
    // X-Frame-Options in every browser with CSP Level 2): every response would carry them for
    // nothing. DNS prefetching is a speed setting, not a security one: browsers keep it.
    xDownloadOptions: false,
    xXssProtection: false,
    xPermittedCrossDomainPolicies: false,
    xFrameOptions: false,
    xDnsPrefetchControl: false,
    // Nothing here sets X-Powered-By: no need to delete it from every response.
    removePoweredBy: false,
  });

export function nonceOf(c: Context): string {
  return c.get("secureHeadersNonce") as string;
}
