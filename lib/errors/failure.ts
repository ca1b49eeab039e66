/**
 * @module
 * What a server failure becomes: a digest, one JSON line on stdout, and the server-side failure
 * screen with status 500. `recordFailure` is the one place a failure is logged (and reported), so
 * each failure gives exactly one line. In production no response holds the error's message or
 * stack; in development the screen shows both.
 */
import type { Context, MiddlewareHandler } from "hono";
import { dev, root } from "./config.ts";
import { describe, digestOf, type ErrorDescription } from "./errors/digest.ts";
import {
  FAILURE_ATTRIBUTE,
  screenDocument,
  screenMarkup,
  screenOverPage,
} from "./errors/screen.ts";
import { log } from "./log.ts";
import { isNotFound, markNotFoundRoute } from "./not_found.ts";
import { nonceOf } from "./security.ts";
import { sentry } from "./sentry/mod.ts";
import type { BoundaryFailure } from "./stream_failure.ts";

export interface Failure {
  digest: string;
  host: string;
  details?: string;
}

/** Names and logs a failure; returns what the screen shows. */
export function recordFailure(c: Context, error: unknown, status: number): Failure {
  const digest = digestOf(error);
  const described = describe(error);
  const reported = sentry?.captureFailure(c, error, digest);
  log("error", headline(described), {
    digest,
    method: c.req.method,
    path: c.req.path,
    route: c.get("route") ?? null,
    status,
    request_id: c.get("requestId") ?? null,
    trace_id: reported?.traceId ?? null,
    sentry_event_id: reported?.eventId ?? null,
    error: described,
  });
  return {
    digest,
    host: new URL(c.req.url).hostname,
    details: dev ? devDetails(described) : undefined,
  };
}

/**
 * A promise rejected with nobody to handle it (an un-awaited call in a handler, say) would end
 * the process and every request in flight with it. It is logged with a digest and reported like
 * any failure instead, with no request to name. Installed once the app is built, so a broken
 * start-up still fails loudly.
 */
export function surviveUnhandledRejections(): void {
  addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    const digest = digestOf(event.reason);
    const described = describe(event.reason);
    const reported = sentry?.captureUnhandled(event.reason, digest);
    log("error", `Unhandled rejection: ${headline(described)}`, {
      digest,
      method: null,
      path: null,
      status: null,
      request_id: null,
      trace_id: reported?.traceId ?? null,
      sentry_event_id: reported?.eventId ?? null,
      error: described,
    });
  });
}

// One short line first: log services trim long entries (Deno Deploy Classic at 2 KB), and the
// digest right after it must survive that. The whole message is in `error.message`.
function headline({ name, message }: ErrorDescription): string {
  const line = `${name}: ${message}`.split("\n")[0];
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

// Deno maps stack frames back to the .ts/.tsx sources (file:line:column as written); frames in
// dependencies and Deno's internals are noise here, and project paths read best relative.
const PROJECT_URL = `file://${root}`;
const LIBRARY_FRAME = /^\s+at .*(\/node_modules\/|ext:)/;

function devDetails({ name, message, stack }: ErrorDescription): string {
  const lines = (stack || `${name}: ${message}`).split("\n");
  return lines.filter((line) => !LIBRARY_FRAME.test(line)).join("\n").replaceAll(PROJECT_URL, "");
}

export function failureResponse(c: Context, error: unknown, status = 500): Response {
  // The client left (before the shell was ready, say) and the work failed with the request's
  // abort reason: nothing broke, and nobody is there to see a screen (499: client closed).
  const { signal } = c.req.raw;
  if (signal.aborted && error === signal.reason) return new Response(null, { status: 499 });
  const failure = recordFailure(c, error, status);
  const html = screenDocument({ ...failure, nonce: nonceOf(c) });
  return c.html(html, status as 500, { "Cache-Control": "no-store" });
}

/**
 * Hono hands `onError` only what is an `Error`; anything else thrown (`throw "oops"`, a rejected
 * promise with a plain object) would escape to `Deno.serve`'s bare 500. This middleware, placed
 * first after the request id and security headers, gives it the failure screen as well.
 */
export const catchThrownValues: MiddlewareHandler = async function catchThrownValues(c, next) {
  try {
    await next();
  } catch (error) {
    c.res = failureResponse(c, error);
  }
};

/**
 * A Suspense boundary failed after the shell went out with status 200: the page ends with a
 * script that replaces the whole document with the server-side screen (its style and title
 * included) and stops the render, so the user is not left on a fallback. It comes after every
 * instruction React writes (`$RC`, and `$RX`, which only marks the boundary as failed), and
 * islands removed with the page never hydrate, so nothing undoes it. Without JavaScript, the
 * `<noscript>` screen after it covers the page instead (only the title stays the page's).
 *
 * `notFound()` thrown there is not a failure, but the 404 status is gone: the boundary stays on
 * its fallback, the rest of the page streams on, and the page is marked `noindex` so it is not
 * indexed as a real one; like any not-found, it sends Sentry no error and no transaction. For the
 * 404 page, call `notFound()` in the handler or outside Suspense.
 */
export function boundaryFailure(c: Context, error: unknown): BoundaryFailure {
  const nonce = nonceOf(c);
  if (isNotFound(error)) {
    markNotFoundRoute(c);
    return {
      tail: `<script nonce="${nonce}">document.head.append(Object.assign(` +
        `document.createElement("meta"),{name:"robots",content:"noindex"}))</script>`,
      stop: false,
    };
  }
  const failure = recordFailure(c, error, 500);
  const markup = JSON.stringify(screenMarkup({ ...failure, nonce })).replace(/</g, "\\u003c");
  return {
    tail: `<script nonce="${nonce}">document.documentElement.setAttribute(` +
      `"${FAILURE_ATTRIBUTE}","server");document.documentElement.innerHTML=${markup}</script>` +
      screenOverPage({ ...failure, nonce }),
    stop: true,
  };
}
