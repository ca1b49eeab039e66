/**
 * @module
 * How the server SDK sends to Sentry: `@sentry/deno`'s own fetch transport, but each request with
 * a time limit. Its transport has none, and keeps at most 64 requests in flight (the SDK drops
 * events past them): an ingest that accepts connections and never answers held all 64 slots for
 * good, and no failure reached Sentry again, even once it answered normally. With the limit, a
 * hung request ends after `SEND_TIMEOUT_MS` (its envelope is dropped, as for any network error)
 * and reporting resumes by itself. Built with the SDK's `createTransport`, which keeps the rest of
 * its behaviour: the buffer, rate limits (`429`, `X-Sentry-Rate-Limits`) and client reports.
 * What it does not deliver (a send that failed or timed out, an error status, one dropped past the
 * 64 in flight or while Sentry's rate limit holds) the SDK drops without a word: the failure lines
 * named `sentry_event_id`s Sentry never got, and nothing told ops why. One `warn` line says so, at
 * most once a minute per process, with how many since the last; the last ones too, a minute later
 * or when the SDK is flushed at exit, with the sends still under way if the flush gives up on them.
 */
import type {
  BaseTransportOptions,
  Envelope,
  Transport,
  TransportMakeRequestResponse,
} from "@sentry/core";
import { log } from "../server/log.ts";
import { timeLimit } from "../server/time_limit.ts";
import { createTransport, suppressTracing } from "./sdk.ts";

/**
 * How long one send may take: Sentry's ingest answers in milliseconds, and a server's envelopes
 * are small, so this leaves a slow ingest room while bounding how long a hung one holds a slot.
 */
export const SEND_TIMEOUT_MS = 5_000;

/** How often, at most, a process says that Sentry did not take what it sent. */
export const UNDELIVERED_NOTICE_MS = 60_000;

export interface TimedTransportOptions extends BaseTransportOptions {
  headers?: Record<string, string>;
}

/**
 * The transport the SDK is given (`transport: timedTransport`); `noticeEveryMs` is for tests, which
 * cannot wait a minute for a notice.
 */
export function timedTransport(
  options: TimedTransportOptions,
  noticeEveryMs = UNDELIVERED_NOTICE_MS,
): Transport {
  return noticingLosses(
    createTransport(options, (request) =>
      // No span for the SDK's own posts, as in `@sentry/deno`'s transport.
      suppressTracing(async (): Promise<TransportMakeRequestResponse> => {
        using limit = timeLimit(SEND_TIMEOUT_MS);
        const res = await fetch(options.url, {
          method: "POST",
          body: request.body as BodyInit,
          headers: options.headers,
          referrerPolicy: "strict-origin",
          signal: limit.signal,
        });
        await res.body?.cancel();
        return {
          statusCode: res.status,
          headers: {
            "x-sentry-rate-limits": res.headers.get("X-Sentry-Rate-Limits"),
            "retry-after": res.headers.get("Retry-After"),
          },
        };
      })),
    noticeEveryMs,
  );
}

/**
 * `transport`, saying in a `warn` line (once every `everyMs` at most) what it did not deliver, and
 * why. Losses within that time are said when it has passed, or at the flush that closes the SDK,
 * whichever comes first: a last burst is said too, with no later loss needed to bring it out. The
 * timer does not keep the process alive.
 */
function noticingLosses(transport: Transport, everyMs: number): Transport {
  let undelivered = 0;
  let reason = "";
  let quietUntil = 0;
  let trailing: ReturnType<typeof setTimeout> | undefined;
  // Sends not ended yet: at a flush that gives up (2 s at exit, a hung send has 5 s) they end
  // after the process has, and only the flush can say they were never delivered.
  let underWay = 0;
  const notice = (unfinished = 0) => {
    clearTimeout(trailing);
    trailing = undefined;
    if (undelivered === 0 && unfinished === 0) return;
    quietUntil = Date.now() + everyMs;
    const why = undelivered > 0 ? reason : "still under way when the SDK was flushed";
    log("warn", `Sentry did not take what this process sent: ${why}`, {
      undelivered,
      ...unfinished > 0 && { under_way: unfinished },
      notice_every_ms: everyMs,
    });
    undelivered = 0;
  };
  const lost = (why: string) => {
    undelivered++;
    reason = why;
    const wait = quietUntil - Date.now();
    if (wait <= 0) notice();
    else if (trailing === undefined) {
      const timer = setTimeout(notice, wait);
      Deno.unrefTimer(timer);
      trailing = timer;
    }
  };
  return {
    ...transport,
    send: (envelope: Envelope) => {
      underWay++;
      return transport.send(envelope).then((response) => {
        underWay--;
        // No status: dropped unsent, past the sends in flight or while Sentry's rate limit holds.
        if (response.statusCode === undefined) {
          lost("dropped unsent (too many under way, or rate limited)");
        } else if (response.statusCode >= 400) lost(`it answered ${response.statusCode}`);
        return response;
      }, (error) => {
        underWay--;
        lost(`the send failed (${failure(error)})`);
        throw error;
      });
    },
    flush: (timeout?: number) =>
      transport.flush(timeout).then((done) => {
        notice(done ? 0 : underWay);
        return done;
      }),
  };
}

/**
 * What a failed send says: Deno's `fetch failed` names its cause (`Connection refused`) only in
 * `cause`, whose URL is the ingest's with the project's key in its query: left out.
 */
function failure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.name}: ${error.message}${cause}`.replace(/\?[^\s)]*/g, "");
}
