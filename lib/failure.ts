/**
 * @module
 * What a server failure becomes: a digest, one JSON line on stdout, and the server-side failure
 * screen with status 500. In production the response never holds the error's message or stack.
 */
import type { Context } from "hono";
import { dev } from "./config.ts";
import { describe, digestOf } from "./errors/digest.ts";
import { screenBody, screenDocument } from "./errors/screen.ts";
import { log } from "./log.ts";
import { nonceOf } from "./security.ts";

export interface Failure {
  digest: string;
  host: string;
  details?: string;
}

/** Names, logs and (through `reporters`) reports a failure; returns what the screen shows. */
export function recordFailure(c: Context, error: unknown, status: number): Failure {
  const digest = digestOf(error);
  const described = describe(error);
  log("error", `${described.name}: ${described.message}`.split("\n")[0], {
    digest,
    method: c.req.method,
    path: c.req.path,
    status,
    request_id: c.get("requestId") ?? null,
    trace_id: null,
    sentry_event_id: null,
    error: described,
  });
  return {
    digest,
    host: new URL(c.req.url).hostname,
    details: dev ? `${described.name}: ${described.message}\n\n${described.stack}` : undefined,
  };
}

export function failureResponse(c: Context, error: unknown, status = 500): Response {
  const failure = recordFailure(c, error, status);
  const html = screenDocument({ ...failure, nonce: nonceOf(c) });
  return c.html(html, status as 500, { "Cache-Control": "no-store" });
}

/** For a failure after the page's shell was sent: a script that swaps in the failure screen. */
export function failureScript(c: Context, error: unknown): string {
  const failure = recordFailure(c, error, 500);
  const body = JSON.stringify(screenBody(failure)).replace(/</g, "\\u003c");
  return `<script nonce="${nonceOf(c)}">document.body.innerHTML=${body}</script>`;
}
