/**
 * @module
 * `changeStream(req, ctx, collection, view)`: the server-sent events of a collection view's
 * changes, for a live page's `useLiveCollection` - one line in a route. Each change is an event
 * `change` whose id is its number in the view (sent back as `Last-Event-ID` by a reconnecting
 * browser, or `?since=` by the hook), so a page that reconnects gets what it missed, exactly once;
 * one too far behind for the changes kept (or with no number) gets an event `snapshot` first - the
 * view's items and the number they are at - never a silent gap. Payloads are `devalue` (Date, Map,
 * BigInt, ... intact). What a client controls is bounded: the number it sends (`sinceOf`), the
 * value it asks for (400 unless it can be one), and the streams a process holds per collection (503
 * with `Retry-After` beyond `maxClients`).
 */
import { stringify } from "devalue";
import { eventStream, type ServerEvent, tooManyStreams } from "../../server/event_stream.ts";
import type { AnyContext } from "../../server/scope.ts";
import { kvOf } from "../access.ts";
import { FeedGapError, sinceOf } from "../feed.ts";
import { takePlace } from "./changes.ts";
import type { Collection, ViewOptions } from "./collection.ts";
import { declaredOf } from "./registry.ts";

/**
 * A change as its event's data, serialized once for all the streams that send it (a feed's
 * followers share the change objects of its ring).
 */
const payloads = new WeakMap<object, string>();
function serialized(change: object): string {
  let data = payloads.get(change);
  if (data === undefined) payloads.set(change, data = stringify(change));
  return data;
}

/**
 * The view a `changeStream` follows, and its bounds.
 *
 * @example
 * ```ts
 * import type { ChangeStreamOptions } from "shell/data";
 *
 * const options: ChangeStreamOptions<"byBoard"> = {
 *   index: "byBoard",
 *   value: "team",
 *   limit: 200,
 *   maxClients: 2_000,
 * };
 * ```
 * @see docs/data.md - A live page
 */
export interface ChangeStreamOptions<I extends string> extends ViewOptions<I> {
  /**
   * Streams of this collection one process holds at once, over all its views (default 10,000);
   * beyond it, 503 with `Retry-After` (the hook backs off and tries again).
   */
  maxClients?: number;
  /** How often an idle stream carries a comment (default 25 s). */
  heartbeatMs?: number;
  /** How soon a browser reconnects by itself after the stream drops (default 1 s). */
  retryMs?: number;
  /**
   * How long a stream stays open before the browser opens it again through the route's guards
   * (default: the app's `eventStreamLifetimeMs`, 5 minutes; `0`: no end).
   */
  lifetimeMs?: number;
}

/**
 * A `text/event-stream` response of the changes to a view of `collection` - all of it, or one
 * value of a non-unique index - for `useLiveCollection` in an island: `change` events numbered
 * with no gaps (the event id), resumed after a reconnect from `Last-Event-ID` (or `?since=`), and
 * a `snapshot` event instead when the client is too far behind, or sent no number. Give it the
 * same `limit` as the page's `snapshot()`.
 *
 * @param req The request (its end ends the stream).
 * @param from The handler's `ctx` (or a middleware's `c`).
 * @param collection The collection.
 * @param options The view, the snapshot's size, and the bound on open streams.
 * @returns The streaming response; 503 when `maxClients` streams are open in this process.
 * @throws {HttpError} 400 when `value` cannot be a value of the index.
 *
 * @example
 * ```ts
 * // routes/notes/events.ts
 * import * as v from "valibot";
 * import type { Handlers } from "shell";
 * import { changeStream, collection } from "shell/data";
 *
 * const notes = collection("notes", {
 *   schema: v.object({ text: v.string(), topic: v.string() }),
 *   indexes: { byTopic: { key: "topic" } },
 * });
 *
 * // GET /notes/events?topic=kv: that topic's notes, live
 * export const handler: Handlers = {
 *   GET: (req, ctx) =>
 *     changeStream(req, ctx, notes, { index: "byTopic", value: ctx.url.searchParams.get("topic") ?? "" }),
 * };
 * ```
 * @see docs/data.md - A live page
 */
export function changeStream<I extends string>(
  req: Request,
  from: AnyContext,
  // deno-lint-ignore no-explicit-any -- any collection: its item types do not matter here
  collection: Collection<any, any, I, any>,
  options: ChangeStreamOptions<I> = {},
): Response {
  const { maxClients = 10_000, heartbeatMs, retryMs, lifetimeMs, limit, ...view } = options;
  const kv = kvOf(from);
  const feed = collection.changes(kv, view);
  const release = takePlace(kv, declaredOf(collection), maxClients);
  if (!release) return tooManyStreams();
  const since = sinceOf(req, new URL(req.url));
  const snapshot = async (): Promise<ServerEvent & { id: number }> => {
    const taken = await collection.snapshot(kv, { ...view, limit });
    return { id: taken.seq, event: "snapshot", data: stringify(taken) };
  };
  async function* changes(signal: AbortSignal): AsyncGenerator<ServerEvent> {
    let cursor = since;
    while (!signal.aborted) {
      if (cursor === undefined) {
        const event = await snapshot();
        yield event;
        cursor = event.id;
      }
      try {
        for await (const change of feed.subscribe(cursor, { signal })) {
          cursor = change.seq;
          yield { id: change.seq, event: "change", data: serialized(change) };
        }
      } catch (error) {
        if (!(error instanceof FeedGapError)) throw error;
        cursor = undefined; // a snapshot, then the changes after it
      }
    }
  }
  const res = eventStream(req, from, (signal) => {
    // The place is given back however the stream ends, also before it ever started.
    if (signal.aborted) release();
    else signal.addEventListener("abort", release, { once: true });
    return changes(signal);
  }, { heartbeatMs, retryMs, lifetimeMs });
  if (res.status === 503) release(); // the app's bound on streams refused it: no stream began
  return res;
}
