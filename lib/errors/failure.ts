/**
 * @module
 * What a server failure becomes: a digest, one JSON line on stdout, a report to telemetry, and the
 * server-side failure screen with status 500. `record` is the one place a failure is logged and
 * reported, so each failure gives exactly one line. In production no response holds the error's
 * message or stack; in development the screen shows both.
 */
import type { Context } from "hono";
import type { BoundaryFailure } from "../render/stream_failure.ts";
import { log, loggedMethod, loggedPath } from "../server/log.ts";
import { nonceOf } from "../server/security.ts";
import { type FailureLinks, NO_LINKS, type Telemetry } from "../server/telemetry.ts";
import { describe, digestOf, type ErrorDescription } from "./digest.ts";
import { appStack } from "./frames.ts";
import { RepeatWindow } from "./repeats.ts";
import { FAILURE_ATTRIBUTE, screenDocument, screenMarkup, screenOverPage } from "./screen.ts";
import { internalsOf } from "../server/internals.ts";

/** A failure the browser repeats on its own is sent once a minute per digest (`repeating`). */
const REPEATS_MS = 60_000;
/** Digests whose last sending `repeating` keeps: far more than an app has failing streams. */
const REPEATS_MAX = 1_000;

export interface Failure {
  digest: string;
  host: string;
  details?: string;
}

export interface FailureOptions {
  dev: boolean;
  /** The project root, which dev details leave out of stack frames. */
  root: string;
  telemetry?: Telemetry;
}

export interface Failures {
  /** Names, logs and reports a failure of the request `c`; returns what the screen shows. */
  record(c: Context, error: unknown, status: number): Failure;
  /**
   * A failure of the request `c` after its answer went out that the browser repeats on its own
   * (an event stream's source: every page holding the stream opens it again a second later).
   * Recorded as `record` does, with status 500, but its event is sent once a minute per digest
   * (`repeats.ts`): a repeat's line has `sentry_event_id: null` and `repeat_of`, the event sent
   * for it.
   */
  repeating(c: Context, error: unknown): void;
  /** The failure screen for `error`, as the request's response. */
  response(c: Context, error: unknown, status?: number): Response;
  /** What ends a page whose Suspense boundary failed after its shell went out. */
  boundary(c: Context, error: unknown): BoundaryFailure;
}

export function failures({ dev, root, telemetry }: FailureOptions): Failures {
  const details = dev ? devDetails(root) : () => undefined;

  const repeats = new RepeatWindow(REPEATS_MS, REPEATS_MAX);

  const record = (c: Context, error: unknown, status: number, window?: RepeatWindow): Failure => {
    const { action, route } = internalsOf(c);
    const digest = digestOf(error, action ? `${action.file}#${action.name}` : route ?? "");
    const described = describe(error);
    const report = () => {
      const repeat = window?.repeated(digest);
      const links = telemetry?.captureFailure(error, digest, c, { send: !repeat }) ?? NO_LINKS;
      if (window && !repeat) window.sent(digest, links.sentry_event_id);
      log("error", headline(described), {
        digest,
        method: loggedMethod(c.req.method),
        path: loggedPath(c.req.path),
        route: route ?? null,
        // An action's path is its opaque id: its export's name says which one failed.
        ...action && { action: action.name },
        status,
        request_id: internalsOf(c).requestId ?? null,
        ...links,
        ...repeat?.eventId && { repeat_of: repeat.eventId },
        error: described,
      });
    };
    // In the request's trace context: the line is linked to the request's span where the
    // platform links logs to traces (Deno Deploy), also once the response went out.
    if (telemetry?.within) telemetry.within(c, report);
    else report();
    return { digest, host: new URL(c.req.url).hostname, details: details(described) };
  };

  return {
    record,
    repeating(c, error) {
      record(c, error, 500, repeats);
    },
    response(c, error, status = 500) {
      const failure = record(c, error, status);
      const html = screenDocument({ ...failure, nonce: nonceOf(c) });
      return c.html(html, status as 500, { "Cache-Control": "no-store" });
    },
    boundary(c, error) {
      const nonce = nonceOf(c);
      const failure = record(c, error, 500);
      const markup = JSON.stringify(screenMarkup({ ...failure, nonce })).replace(/</g, "\\u003c");
      return {
        tail: `<script nonce="${nonce}">document.documentElement.setAttribute(` +
          `"${FAILURE_ATTRIBUTE}","server");document.documentElement.innerHTML=${markup}</script>` +
          screenOverPage({ ...failure, nonce }),
        stop: true,
      };
    },
  };
}

/**
 * A promise rejected with nobody to handle it (an un-awaited call in a handler, say): logged with a
 * digest and reported like any failure, with no request to name. The entry points install this.
 */
export function logUnhandledRejection(reason: unknown, telemetry?: Telemetry): void {
  const digest = digestOf(reason);
  const described = describe(reason);
  const links: FailureLinks = telemetry?.captureFailure(reason, digest) ?? NO_LINKS;
  log("error", `Unhandled rejection: ${headline(described)}`, {
    digest,
    method: null,
    path: null,
    status: null,
    request_id: null,
    ...links,
    error: described,
  });
}

// One short line first: log services trim long entries (Deno Deploy Classic at 2 KB), and the
// digest right after it must survive that. The whole message is in `error.message`.
function headline({ name, message }: ErrorDescription): string {
  const line = `${name}: ${message}`.split("\n")[0];
  return line.length > 200 ? `${line.slice(0, 199)}\u2026` : line;
}

// Deno maps stack frames back to the .ts/.tsx sources (file:line:column as written).
function devDetails(root: string) {
  return ({ name, message, stack }: ErrorDescription): string =>
    appStack(stack || `${name}: ${message}`, root);
}
