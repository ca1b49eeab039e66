/**
 * @module
 * `eventStream(req, ctx, events)`: a `text/event-stream` response (server-sent events) for a
 * browser's `EventSource`. It ends when the client leaves or the app closes (`App.close()`, so a
 * graceful shutdown does not wait for it), carries a comment every `heartbeatMs` so proxies keep an
 * idle stream open, and is outside the request deadline, which ends once the response starts. It
 * is pull-based: the next event is taken from `events` only once the client has read the last, so
 * a slow client holds one event, not a queue. It lives a bounded time (`lifetimeMs`, the app's
 * `eventStreamLifetimeMs` by default), then sends an event `renew` and ends: the browser opens it
 * again through the route's guards - a stream opened before a sign-out does not outlive the
 * session by more than that - and resumes by `Last-Event-ID` (`useFeed` at once, seamlessly).
 * Every stream names its build first (`app-build`), so a page of another build - open across a
 * deploy, its stream now answered by the new version - is not handed events of a shape its code
 * does not know.
 * An app keeps at most `AppOptions.maxEventStreams` open: a stream is the one request a proxy
 * keeps open for as long as its client likes, so without a bound one client's thousands of them
 * took the process's file descriptors (and some 80 KB of memory each) until it could accept no
 * other.
 *
 * A place is held only by a stream being sent. One made for a request that then answers otherwise
 * (a handler that returns an error, a redirect, JSON, or throws; a deadline that passed; a HEAD
 * request, whose body Hono drops) is ended when the request's answer is known (`settleStreams`,
 * called by `frame.ts`): its place is given back and its source stopped. Without it such places
 * stayed counted until the process ended - after a normal answer the request's signal never
 * aborts (`no-legacy-abort`) - and enough of them turned every stream away for good.
 */
import type { Context } from "hono";
import { isHttpError } from "../shared/http_error.ts";
import { RENEW_EVENT } from "../shared/stream_renew.ts";
import { BUILD_EVENT } from "../shared/versions.ts";
import { beat } from "./heartbeat.ts";
import { internalsOf } from "./internals.ts";
import { type AnyContext, contextOf, scopeOf } from "./scope.ts";

declare module "./internals.ts" {
  interface Internals {
    /** The bodies of the event streams made for the request, until its answer is known. */
    eventStreams: ReadableStream<Uint8Array>[];
    /** Set once the request's answer is known: a stream made after it is never sent. */
    answered: boolean;
  }
}

/**
 * One server-sent event, as `eventStream`'s source yields it.
 *
 * @example
 * ```ts
 * import type { ServerEvent } from "shell";
 *
 * const event: ServerEvent = { id: 7, event: "entry", data: JSON.stringify({ id: 7 }) };
 * ```
 * @see docs/data.md - Live updates
 */
export interface ServerEvent {
  /** Sent back by a reconnecting `EventSource` as `Last-Event-ID`. */
  id?: string | number;
  /**
   * The event's type (`addEventListener(event, ...)`); `message` when unset; never `renew` nor
   * `app-build`.
   */
  event?: string;
  /** The payload: `data:` lines, one per line of it. */
  data: string;
}

/**
 * `eventStream`'s timings.
 *
 * @example
 * ```ts
 * import type { EventStreamOptions } from "shell";
 *
 * const options: EventStreamOptions = { heartbeatMs: 15_000, retryMs: 3_000 };
 * ```
 * @see docs/data.md - Live updates
 */
export interface EventStreamOptions {
  /**
   * How often an idle stream carries a comment (default 25 000 ms: under common proxy timeouts).
   */
  heartbeatMs?: number;
  /** How soon the browser reconnects after the stream drops (default 1 000 ms). */
  retryMs?: number;
  /**
   * How long the stream stays open before it sends `renew` and ends, so that the browser opens it
   * again through the route's guards (default: the app's `eventStreamLifetimeMs`, 5 minutes;
   * `0`: no end). It ends between 80 % and 100 % of it, at random.
   */
  lifetimeMs?: number;
}

const encoder = new TextEncoder();
const RENEW = encoder.encode(`event: ${RENEW_EVENT}\ndata:\n\n`);
/** The framework's own event types, which no source may send. */
const RESERVED = new Set([RENEW_EVENT, BUILD_EVENT]);

/**
 * A `text/event-stream` response (server-sent events) for a browser's `EventSource`, streaming
 * what `events` yields. It ends when the client leaves or the app closes, carries a comment every
 * `heartbeatMs` so proxies keep an idle stream open, and is outside the request's deadline. The
 * next event is taken only once the client has read the last. After `lifetimeMs` it sends an event
 * `renew` and ends, so the browser comes back through the route's guards (a signed-out user's
 * stream does not go on) and resumes from the last event id it got.
 *
 * @param req The request, whose end (the client leaving) ends the stream.
 * @param from The handler's `ctx` (or a middleware's `c`): the app whose closing ends the stream.
 * @param events The source: gets a signal that aborts when the stream ends; pass it on.
 * @param options Heartbeat, reconnection and lifetime.
 * @returns The streaming response.
 *
 * @example
 * ```ts
 * // routes/clock.ts
 * import { defineRoute, eventStream } from "shell";
 *
 * export const handler = defineRoute("clock.ts").handlers({
 *   GET(req, ctx) {
 *     return eventStream(req, ctx, async function* (signal) {
 *       for (let i = 0; i < 10 && !signal.aborted; i++) {
 *         yield { id: i, event: "tick", data: new Date().toISOString() };
 *         await new Promise((resolve) => setTimeout(resolve, 1000));
 *       }
 *     });
 *   },
 * });
 * ```
 * @see docs/data.md - Live updates
 */
export function eventStream(
  req: Request,
  from: AnyContext,
  events: (signal: AbortSignal) => AsyncIterable<ServerEvent>,
  { heartbeatMs = 25_000, retryMs = 1_000, lifetimeMs }: EventStreamOptions = {},
): Response {
  const c = contextOf(from);
  const scope = scopeOf(c);
  const streams = scope.eventStreams;
  if (streams.open >= streams.max) return tooManyStreams();
  const lifetime = lifetimeMs ?? scope.streamLifetimeMs ?? 0;
  const ended = new AbortController();
  const signal = ended.signal;
  // Not `AbortSignal.any`: the app's closing signal would keep a signal following it, and the
  // weak references that go with it, for every stream; these two listeners go when it ends.
  const end = () => ended.abort();
  const ends = [req.signal, scope.closing];
  const iterator = events(signal)[Symbol.asyncIterator]();
  const internals = internalsOf(c);
  streams.open++; // until `stop`
  const body = new ReadableStream<Uint8Array>({
    start(stream) {
      // The first bytes go out at once: the browser's `open` event, and headers past any proxy.
      // Then the build serving, before any event of the source's: a page of another build (a tab
      // open across a deploy, reconnected to the new one) stops there rather than hand its old
      // code events of the new one's shape, and moves to the new version (`useFeed`).
      stream.enqueue(
        encoder.encode(`retry: ${retryMs}\n\n${format({ event: BUILD_EVENT, data: scope.build })}`),
      );
      const stopBeating = beat(stream, heartbeatMs);
      // Whatever a pending pull takes after this is not sent: the next stream starts from the
      // last id the client got, so nothing is lost.
      const renew = lifetime > 0
        ? setTimeout(() => {
          stream.enqueue(RENEW);
          ended.abort();
        }, lifetime * (0.8 + Math.random() * 0.2))
        : undefined;
      const stop = () => {
        streams.open--; // once: `signal` aborts once
        for (const from of ends) from.removeEventListener("abort", end);
        stopBeating();
        clearTimeout(renew);
        // The source ends too, even one held at a `yield` by a client that stopped reading.
        iterator.return?.().catch(() => {});
        try {
          stream.close();
        } catch { /* the client cancelled it */ }
      };
      signal.addEventListener("abort", stop, { once: true });
      if (ends.some((from) => from.aborted)) end();
      else for (const from of ends) from.addEventListener("abort", end, { once: true });
    },
    async pull(stream) {
      try {
        const next = await iterator.next();
        // `useFeed` opens the next stream at once on `renew`, without backing off or moving on:
        // a source's own event of that name, sent first, had every page reopen it in a loop; and
        // it moves its page to another build on `app-build`.
        if (!next.done && next.value.event !== undefined && RESERVED.has(next.value.event)) {
          throw new TypeError(
            `event type "${next.value.event}" is reserved: the framework's streams send it`,
          );
        }
        if (!next.done && !signal.aborted) {
          return stream.enqueue(encoder.encode(format(next.value)));
        }
      } catch (error) {
        // A failure of the request's, as any other (a line with its digest, a Sentry event in the
        // request's trace), and the stream ends: the browser reconnects, gets what it missed by
        // `Last-Event-ID`, and the source starts afresh - or fails again, which every open page
        // repeats (`useFeed` backing off): its event goes once a minute, across the processes
        // sharing the app's KV (`repeating`; its line is written before the stream ends, KV's
        // answer awaited half a second at most). Not when the stream was ending anyway (the
        // client left, its lifetime is over, the app closes: the source failed for that), nor for
        // an expected error (`httpError`), which is no failure: the reconnection meets the route's
        // answer to it.
        if (!signal.aborted && !isHttpError(error)) {
          // Ended even when the reporting itself throws: the stream's place and beat go back.
          await scope.failures.repeating(c, error).finally(() => ended.abort());
        }
      }
      ended.abort();
    },
    cancel() {
      ended.abort();
    },
  });
  const res = new Response(body, {
    headers: {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      // nginx buffers responses unless told not to, which would hold events back.
      "X-Accel-Buffering": "no",
    },
  });
  // Answered already (its deadline passed while the handler ran): this stream is never sent.
  if (internals.answered) body.cancel().catch(() => {});
  else (internals.eventStreams ??= []).push(body);
  return res;
}

/**
 * Once the request's answer `c.res` is final (the frame's last step): each event stream made for
 * it that is not being sent ends, giving its place back and stopping its source. Sent is the
 * answer's body, or a stream something reads already (a middleware that wraps the body, as the
 * Sentry middleware does, reads it through its own); never on HEAD, whose body Hono drops. A
 * request that made no stream pays one property write.
 */
export function settleStreams(c: Context): void {
  const internals = internalsOf(c);
  internals.answered = true;
  const made = internals.eventStreams;
  if (!made) return;
  internals.eventStreams = undefined;
  const head = c.req.method === "HEAD";
  // A middleware's answer to HEAD, a wrapper of the stream say, is dropped unread too.
  if (head) c.res.body?.cancel().catch(() => {});
  for (const body of made) {
    if (head || (body !== c.res.body && !body.locked)) body.cancel().catch(() => {});
  }
}

/** 503 past `maxEventStreams`: the browser's `EventSource` and the live hooks try again later. */
export function tooManyStreams(): Response {
  return new Response("Too many live pages on this server: try again in a moment.\n", {
    status: 503,
    headers: {
      "Retry-After": "5",
      "Cache-Control": "no-store",
      "Content-Type": "text/plain; charset=utf-8",
    },
  });
}

function format({ id, event, data }: ServerEvent): string {
  let text = "";
  if (id !== undefined) text += `id: ${oneLine(String(id))}\n`;
  if (event !== undefined) text += `event: ${oneLine(event)}\n`;
  for (const line of data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return text + "\n";
}

/** A field of an event ends at a line break: none may reach the stream from a value. */
function oneLine(value: string): string {
  return value.replace(/[\r\n]/g, " ");
}
