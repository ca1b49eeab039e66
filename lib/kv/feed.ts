/**
 * @module
 * A {@link KvLog}'s new items as they are appended, for live pages (an SSE endpoint).
 *
 * One KV watch per store and log in each process — each `deno serve --parallel` worker, each Deno
 * Deploy isolate — fanned out to every subscriber, and only while there is one. The watch is on
 * the log's counter, not its items: when the counter moves, the new items are read once (one range
 * query) into a small ring of recent items, and subscribers take theirs from it; only one that
 * fell further behind reads KV itself. A subscriber passes the last id it has (the page's newest
 * item, or the SSE `Last-Event-ID` after a reconnect) and gets what it missed, then live items.
 *
 * A watch fires for writes by any worker of this process and, on Deno Deploy, any isolate; it does
 * not fire for writes by another process on the same SQLite file: there, set `pollIntervalMs`.
 */
import { after, type KvLog, type Logged } from "./log.ts";

/**
 * How a feed keeps up: its ring of recent items, and polling for writes by other processes.
 *
 * @example
 * ```ts
 * import { feedOf, type FeedOptions, kvLog } from "shell/data";
 *
 * // Several processes write one SQLite file: kv.watch does not see each other's writes.
 * const options: FeedOptions = { pollIntervalMs: 1_000 };
 * const kv = await Deno.openKv(":memory:");
 * const feed = feedOf(kv, kvLog<{ id: number }>(["jobs"]), options);
 * ```
 * @see docs/data.md — Live updates
 */
export interface FeedOptions {
  /** Recent items kept in memory for subscribers slightly behind (default 50). */
  ringSize?: number;
  /** Also read the counter this often: needed only when other processes write the same file. */
  pollIntervalMs?: number;
}

/**
 * A subscription's end and backlog.
 *
 * @example
 * ```ts
 * import type { SubscribeOptions } from "shell/data";
 *
 * const options: SubscribeOptions = { signal: AbortSignal.timeout(60_000), maxBacklog: 20 };
 * ```
 * @see docs/data.md — Live updates
 */
export interface SubscribeOptions {
  /** Ends the subscription (and, with the last one, the watch). */
  signal?: AbortSignal;
  /** After a long absence, only the newest this many missed items are sent (default 50). */
  maxBacklog?: number;
}

/**
 * A log's new items as they are appended (`feedOf`): one KV watch per store and log in a process,
 * shared by every subscriber.
 *
 * @example
 * ```ts
 * import { type Feed, feedOf, kvLog } from "shell/data";
 *
 * const kv = await Deno.openKv(":memory:");
 * const feed: Feed<{ id: number }> = feedOf(kv, kvLog<{ id: number }>(["jobs"]));
 * for await (const job of feed.subscribe(0, { signal: AbortSignal.timeout(1_000) })) {
 *   console.log(job.id);
 * }
 * ```
 * @see docs/data.md — Live updates
 */
export interface Feed<T extends Logged> {
  /**
   * Items with an id above `since`, the missed ones first, then live ones, in id order; with no
   * `since`, only items appended from now on. Ends when `signal` aborts; throws if the watch fails.
   */
  subscribe(since?: number, options?: SubscribeOptions): AsyncGenerator<T>;
  /** How many subscriptions are open in this process. */
  readonly subscribers: number;
}

const feeds = new WeakMap<Deno.Kv, Map<KvLog<Logged>, Feed<Logged>>>();

/**
 * The feed of `log` in `kv`: its new items as they are appended, for live pages (an event stream).
 * One per store and log in this isolate, made on first use; it watches KV only while someone
 * subscribes. A watch sees writes by every worker and Deploy isolate, not by another process on the
 * same SQLite file: there, set `pollIntervalMs`.
 *
 * @param kv The store.
 * @param log The log to follow.
 * @param options Used when the feed is made (the first call for this store and log).
 * @returns The feed.
 *
 * @example
 * ```ts
 * // routes/guestbook/events.ts
 * import { defineRoute, eventStream } from "shell";
 * import { feedOf, kvLog, kvOf, sinceOf } from "shell/data";
 *
 * const ENTRIES = kvLog<{ id: number; message: string }>(["guestbook"]);
 *
 * export const handler = defineRoute("guestbook/events.ts").handlers({
 *   GET(req, ctx) {
 *     const feed = feedOf(kvOf(ctx), ENTRIES);
 *     return eventStream(req, ctx, async function* (signal) {
 *       for await (const entry of feed.subscribe(sinceOf(req, ctx.url), { signal })) {
 *         yield { id: entry.id, event: "entry", data: JSON.stringify(entry) };
 *       }
 *     });
 *   },
 * });
 * ```
 * @see docs/data.md — Live updates
 */
export function feedOf<T extends Logged>(
  kv: Deno.Kv,
  log: KvLog<T>,
  options?: FeedOptions,
): Feed<T> {
  let ofStore = feeds.get(kv);
  if (!ofStore) feeds.set(kv, ofStore = new Map());
  let feed = ofStore.get(log);
  if (!feed) ofStore.set(log, feed = createFeed(kv, log, options));
  return feed as Feed<T>;
}

function createFeed<T extends Logged>(
  kv: Deno.Kv,
  log: KvLog<T>,
  { ringSize = 50, pollIntervalMs }: FeedOptions = {},
): Feed<T> {
  let subscribers = 0;
  let latest: number | undefined; // the newest id known; undefined while not watching
  let ring: T[] = []; // contiguous ids, ascending, the last being `latest`
  let failure: unknown;
  let generation = 0; // bumps on each stop, so a late update from an old watch is dropped
  let stopWatching = () => {};
  let wake = () => {};
  let changed = new Promise<void>((resolve) => wake = resolve);
  const notify = () => {
    const resolve = wake;
    changed = new Promise<void>((r) => wake = r);
    resolve();
  };

  function start() {
    const mine = ++generation;
    const reader = kv.watch<[number]>([log.latest]).getReader();
    let queue = Promise.resolve();
    const update = (value: number | null) =>
      queue = queue.then(() => apply(mine, value ?? 0)).catch((error) => fail(mine, error));
    const poll = () =>
      kv.get<number>(log.latest).then((e) => update(e.value), (error) => fail(mine, error));
    const timer = pollIntervalMs ? setInterval(poll, pollIntervalMs) : undefined;
    stopWatching = () => {
      clearInterval(timer);
      reader.cancel().catch(() => {});
    };
    (async () => {
      for (let r = await reader.read(); !r.done; r = await reader.read()) update(r.value[0].value);
      throw new Error("The KV watch ended (was the store closed?)"); // unless stop() ended it
    })().catch((error) => fail(mine, error));
  }

  async function apply(mine: number, value: number) {
    if (mine !== generation) return;
    if (latest === undefined) {
      latest = value;
    } else if (value > latest) {
      const fresh = await after(kv, log, latest, ringSize);
      if (mine !== generation || fresh.length === 0) return;
      ring = fresh[0].id === latest + 1 ? ring.concat(fresh).slice(-ringSize) : fresh;
      latest = ring[ring.length - 1].id;
    } else return;
    notify();
  }

  function fail(mine: number, error: unknown) {
    if (mine !== generation) return;
    failure = error;
    stop();
  }

  function stop() {
    generation++;
    stopWatching();
    latest = undefined;
    ring = [];
    notify();
  }

  async function* subscribe(
    since?: number,
    { signal, maxBacklog = 50 }: SubscribeOptions = {},
  ): AsyncGenerator<T> {
    if (subscribers++ === 0) {
      failure = undefined;
      start();
    }
    const aborted = new Promise<void>((resolve) =>
      signal?.addEventListener("abort", () => resolve(), { once: true })
    );
    let cursor = since;
    try {
      while (!signal?.aborted) {
        if (failure) throw failure;
        if (latest === undefined || (cursor ??= latest) >= latest) {
          await Promise.race([changed, aborted]);
          continue;
        }
        const ringFrom = ring.length ? ring[0].id - 1 : latest;
        const batch = cursor >= ringFrom
          ? ring.slice(cursor - ringFrom) // ids are contiguous: index = id - ringFrom - 1
          : await after(kv, log, cursor, maxBacklog);
        for (const item of batch) {
          if (item.id <= cursor) continue;
          cursor = item.id;
          yield item;
        }
      }
    } finally {
      if (--subscribers === 0) stop();
    }
  }

  return {
    subscribe,
    get subscribers() {
      return subscribers;
    },
  };
}

/**
 * The id a client last has: `Last-Event-ID` (an `EventSource` reconnecting) or else `?since=` (the
 * page's newest, on its first connection). Anything else (junk, absent) is undefined: live items
 * only.
 *
 * @param req The event stream's request.
 * @param url Its URL (`ctx.url`).
 * @returns The id, or `undefined`.
 *
 * @example
 * ```ts
 * import { sinceOf } from "shell/data";
 *
 * const req = new Request("http://localhost/events?since=12");
 * console.log(sinceOf(req, new URL(req.url))); // 12
 * ```
 * @see docs/data.md — Live updates
 */
export function sinceOf(req: Request, url: URL): number | undefined {
  for (const value of [req.headers.get("last-event-id"), url.searchParams.get("since")]) {
    if (value && /^\d{1,15}$/.test(value)) return Number(value);
  }
  return undefined;
}
