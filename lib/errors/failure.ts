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
import { RepeatWindow, type Sent } from "./repeats.ts";
import { repeatsInKv } from "./repeats_kv.ts";
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
  /** The app's store: with it, `repeating`'s bound holds across the processes that share it. */
  kv?: Deno.Kv;
}

export interface Failures {
  /** Names, logs and reports a failure of the request `c`; returns what the screen shows. */
  record(c: Context, error: unknown, status: number): Failure;
  /**
   * A failure of the request `c` after its answer went out that the browser repeats on its own
   * (an event stream's source: every page holding the stream opens it again a second later).
   * Recorded as `record` does, with status 500, but its event is sent once a minute per digest -
   * across the processes sharing the app's KV, when it has one (`repeats.ts`): a repeat's line has
   * `sentry_event_id: null` and `repeat_of`, the event sent for it, by this process or another.
   * Settles once the line is written: with KV, after the store's answer (or `waitMs`).
   */
  repeating(c: Context, error: unknown): Promise<void>;
  /** The failure screen for `error`, as the request's response. */
  response(c: Context, error: unknown, status?: number): Response;
  /** What ends a page whose Suspense boundary failed after its shell went out. */
  boundary(c: Context, error: unknown): BoundaryFailure;
}

export function failures({ dev, root, telemetry, kv }: FailureOptions): Failures {
  const details = dev ? devDetails(root) : () => undefined;

  // Only what is sent needs agreeing on: with no events sent, the store is not asked.
  const sends = telemetry?.sendsEvents === true;
  const shared = kv && sends ? repeatsInKv(kv) : undefined;
  const repeats = new RepeatWindow(REPEATS_MS, REPEATS_MAX, { shared });

  /** The failure's digest (of its action or route) and what its line says of the error. */
  const named = (c: Context, error: unknown) => {
    const { action, route } = internalsOf(c);
    const digest = digestOf(error, action ? `${action.file}#${action.name}` : route ?? "");
    return { digest, described: describe(error) };
  };

  /**
   * Logs and reports the failure: its event sent (as `eventId`, when given), or, when it is a
   * `repeat`, not sent and its line naming the event that was.
   */
  const write = (
    c: Context,
    error: unknown,
    { digest, described }: ReturnType<typeof named>,
    status: number,
    repeat?: Sent,
    eventId?: string,
  ): void => {
    const { action, route } = internalsOf(c);
    const report = () => {
      const links = telemetry?.captureFailure(error, digest, c, { send: !repeat, eventId }) ??
        NO_LINKS;
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
  };

  const record = (c: Context, error: unknown, status: number): Failure => {
    const failure = named(c, error);
    write(c, error, failure, status);
    return {
      digest: failure.digest,
      host: new URL(c.req.url).hostname,
      details: details(failure.described),
    };
  };

  return {
    record,
    async repeating(c, error) {
      const failure = named(c, error);
      // Chosen before it is sent, so that other processes can name it (`repeat_of`) meanwhile.
      const eventId = sends ? crypto.randomUUID().replaceAll("-", "") : undefined;
      const repeat = await repeats.check(failure.digest, eventId ?? null);
      write(c, error, failure, 500, repeat, eventId);
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
