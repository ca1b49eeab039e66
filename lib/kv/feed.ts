/**
 * @module
 * A numbered sequence's new items as they are written, for live pages (an SSE endpoint): a
 * {@link KvLog}'s items (`feedOf`), or a collection's changes (`collection/changes.ts`).
 *
 * One KV watch per store and sequence in each process - each `deno serve --parallel` worker, each
 * Deno Deploy isolate - fanned out to every subscriber, and only while there is one. The watch is
 * on the sequence's counter, not its items: when the counter moves, the new items are read once
 * (one range query) into a small ring of recent items, and subscribers take theirs from it; only
 * one that fell further behind reads KV itself. A subscriber passes the last number it has (the
 * page's newest item, or the SSE `Last-Event-ID` after a reconnect) and gets what it missed, then
 * live items; one that cannot have all it missed gets the newest, or a {@link FeedGapError}.
 *
 * A watch fires for writes by any worker of this process and, on Deno Deploy, any isolate; it does
 * not fire for writes by another process on the same SQLite file: there, set `pollIntervalMs`.
 */
import { feedSettingsProblem } from "./feed_bounds.ts";
import { keyName } from "./key_name.ts";
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
 * @see docs/data.md - Live updates
 */
export interface FeedOptions {
  /** Recent items kept in memory for subscribers slightly behind: 1 to 10,000 (default 50). */
  ringSize?: number;
  /**
   * Also read the counter this often, 10 ms to an hour: needed only when other processes write the
   * same file (left out: never).
   */
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
 * @see docs/data.md - Live updates
 */
export interface SubscribeOptions {
  /** Ends the subscription (and, with the last one, the watch). */
  signal?: AbortSignal;
  /**
   * After a long absence, at most this many missed items are sent, 1 to 10,000 (default 50): the newest of
   * them (`gaps: "skip"`), or none, with a {@link FeedGapError} (`gaps: "throw"`).
   */
  maxBacklog?: number;
  /**
   * What a subscriber that cannot have every item it missed gets: the newest it can (`"skip"`,
   * the default: a list of recent entries), or a {@link FeedGapError} (`"throw"`: a page that must
   * see every change, and starts again from a snapshot).
   */
  gaps?: "skip" | "throw";
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
 * @see docs/data.md - Live updates
 */
export interface Feed<T> {
  /**
   * Items with an id above `since`, the missed ones first, then live ones, in id order; with no
   * `since`, only items appended from now on. Ends when `signal` aborts; throws if the watch fails.
   */
  subscribe(since?: number, options?: SubscribeOptions): AsyncGenerator<T>;
  /** How many subscriptions are open in this process. */
  readonly subscribers: number;
}

/** Each store's feeds of logs, by the log's counter key (`keyName`), while they are followed. */
const feeds = new WeakMap<Deno.Kv, Map<string, Feed<Logged>>>();

/**
 * The feed of `log` in `kv`: its new items as they are appended, for live pages (an event stream).
 * One per store and log (its keys, however often `kvLog` named it) in this isolate while anyone
 * subscribes; it watches KV only then. A watch sees writes by every worker and Deploy isolate, not
 * by another process on the same SQLite file: there, set `pollIntervalMs`.
 *
 * @param kv The store.
 * @param log The log to follow.
 * @param options Used when the feed is made (a first subscriber, while none follows the log).
 * @throws {TypeError} When `ringSize` or `pollIntervalMs` is out of its bounds (named).
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
 * @see docs/data.md - Live updates
 */
export function feedOf<T extends Logged>(
  kv: Deno.Kv,
  log: KvLog<T>,
  options: FeedOptions = {},
): Feed<T> {
  const problem = feedSettingsProblem({ ...options, maxBacklog: undefined });
  if (problem) throw new TypeError(`feedOf: ${problem}`);
  let ofStore = feeds.get(kv);
  if (!ofStore) feeds.set(kv, ofStore = new Map());
  const source: Sequence<T> = {
    counter: log.latest,
    read: (cursor, limit) => after(kv, log, cursor, limit),
    seq: (item) => item.id,
  };
  return sharedFeed(
    ofStore as Map<string, Feed<T>>,
    keyName(log.latest),
    (onIdle) => followSequence(kv, source, options, onIdle),
  );
}

/**
 * The feed kept in `registry` under `name` while anyone subscribes: found, or made (`make`, given
 * what lets it go with its last subscriber), as a subscription starts - never before. A feed made
 * ahead of its subscription stayed when none came (a stream refused, or left before it began):
 * under names a client chose, or one per request, they piled up for the life of the process.
 */
export function sharedFeed<T>(
  registry: Map<string, Feed<T>>,
  name: string,
  make: (onIdle: () => void) => Feed<T>,
): Feed<T> {
  const shared = () => {
    const existing = registry.get(name);
    if (existing) return existing;
    const feed = make(() => {
      if (registry.get(name) === feed) registry.delete(name);
    });
    registry.set(name, feed);
    return feed;
  };
  return {
    // Made and subscribed in one step, at the first `next`: the subscription counts itself before
    // it awaits anything, and one never started makes no feed. Not a generator around the feed's
    // (`yield*`): that held some 0.5 KB more a waiting subscriber (tests/feed_subscribers_test.ts).
    subscribe: (since, options) => {
      const problem = feedSettingsProblem({ maxBacklog: options?.maxBacklog });
      if (problem) throw new TypeError(`subscribe: ${problem}`);
      return lazily(() => shared().subscribe(since, options));
    },
    get subscribers() {
      return registry.get(name)?.subscribers ?? 0;
    },
  };
}

/** The generator `start` makes, made at the first `next`; none at all when returned before. */
function lazily<T>(start: () => AsyncGenerator<T>): AsyncGenerator<T> {
  return new Lazily(start);
}

/** A class, not an object of closures: each of thousands of subscriptions holds two fields. */
class Lazily<T> implements AsyncGenerator<T> {
  #start: (() => AsyncGenerator<T>) | undefined;
  #inner: AsyncGenerator<T> | undefined;
  constructor(start: () => AsyncGenerator<T>) {
    this.#start = start;
  }
  next(...args: [] | [unknown]): Promise<IteratorResult<T>> {
    if (!this.#inner && this.#start) {
      this.#inner = this.#start();
      this.#start = undefined;
    }
    return this.#inner ? this.#inner.next(...args) : done();
  }
  return(value?: unknown): Promise<IteratorResult<T>> {
    this.#start = undefined;
    return this.#inner ? this.#inner.return(value) : done(value);
  }
  throw(error: unknown): Promise<IteratorResult<T>> {
    this.#start = undefined;
    return this.#inner ? this.#inner.throw(error) : Promise.reject(error);
  }
  [Symbol.asyncIterator](): this {
    return this;
  }
  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }
}

function done(value?: unknown) {
  return Promise.resolve({ done: true as const, value });
}

/**
 * A numbered sequence in KV that a feed can follow: a counter holding the newest number (bumped
 * in the same commit as each item is written), and the items after a number, read from KV.
 */
export interface Sequence<T> {
  /** The key of the newest number: the one key a watch needs. */
  counter: Deno.KvKey;
  /** Up to `limit` items numbered above `cursor` - the newest of them when there are more. */
  read(cursor: number, limit: number): Promise<T[]>;
  /** An item's number: 1, 2, 3, ... with no gaps. */
  seq(item: T): number;
}

/**
 * A feed of `source`: one KV watch on its counter (only while someone subscribes), the new items
 * read once into a ring that every subscriber takes from. `onIdle` runs when the last subscriber
 * leaves, for a caller that keeps feeds by a key a client chose and must let them go.
 */
export function followSequence<T>(
  kv: Deno.Kv,
  source: Sequence<T>,
  { ringSize = 50, pollIntervalMs }: FeedOptions = {},
  onIdle?: () => void,
): Feed<T> {
  const { counter, read, seq } = source;
  let subscribers = 0;
  let latest: number | undefined; // the newest number known; undefined while not watching
  let ring: T[] = []; // contiguous numbers, ascending, the last being `latest`
  let failure: unknown;
  let generation = 0; // bumps on each stop, so a late update from an old watch is dropped
  let stopWatching = () => {};
  /** The subscribers waiting for the feed to move, each until it moves or its signal aborts. */
  const waiting = new Set<() => void>();
  const notify = () => {
    for (const wake of waiting) wake();
  };
  /**
   * Until the feed moves or `signal` aborts. Nothing of the wait is left after it: racing one
   * promise of the signal's instead left a reaction on it per wait until the subscription ended -
   * some 380 bytes a change sent, per subscriber (attack 12).
   */
  const moved = (signal?: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const wake = () => {
        waiting.delete(wake);
        signal?.removeEventListener("abort", wake);
        resolve();
      };
      waiting.add(wake);
      signal?.addEventListener("abort", wake, { once: true });
    });

  function start() {
    const mine = ++generation;
    const reader = kv.watch<[number]>([counter]).getReader();
    let queue = Promise.resolve();
    const update = (value: number | null) =>
      queue = queue.then(() => apply(mine, value ?? 0)).catch((error) => fail(mine, error));
    const poll = () =>
      kv.get<number>(counter).then((e) => update(e.value), (error) => fail(mine, error));
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
      const fresh = await read(latest, ringSize);
      if (mine !== generation || fresh.length === 0) return;
      ring = seq(fresh[0]) === latest + 1 && contiguous(fresh)
        ? ring.concat(fresh).slice(-ringSize)
        : fresh.slice(lastGap(fresh));
      latest = seq(ring[ring.length - 1]);
    } else return;
    notify();
  }

  /** True when the items are numbered one after the other. */
  function contiguous(items: T[]): boolean {
    return items.every((item, i) => i === 0 || seq(item) === seq(items[i - 1]) + 1);
  }

  /** Where the last contiguous run of `items` starts. */
  function lastGap(items: T[]): number {
    let from = items.length - 1;
    while (from > 0 && seq(items[from - 1]) === seq(items[from]) - 1) from--;
    return from;
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
    { signal, maxBacklog = 50, gaps = "skip" }: SubscribeOptions = {},
  ): AsyncGenerator<T> {
    if (subscribers++ === 0) {
      failure = undefined;
      start();
    }
    let cursor = since;
    let checked = false; // whether a number ahead of the watch was checked against the store
    try {
      while (!signal?.aborted) {
        if (failure) throw failure;
        if (latest === undefined) {
          await moved(signal);
          continue;
        }
        cursor ??= latest;
        if (cursor > latest && gaps === "throw" && !checked) {
          // The watch may not have caught up yet (a feed just started reads the counter as it
          // was a moment ago): only the store itself says whether the number is ahead of it.
          checked = true;
          const actual = (await kv.get<number>(counter)).value ?? 0;
          if (cursor > actual) throw new FeedGapError(cursor, actual);
        }
        if (cursor >= latest) {
          await moved(signal);
          continue;
        }
        const ringFrom = ring.length ? seq(ring[0]) - 1 : latest;
        const batch = cursor >= ringFrom
          ? ring.slice(cursor - ringFrom) // numbers are contiguous: index = n - ringFrom - 1
          : await read(cursor, maxBacklog);
        if (gaps === "throw" && (batch.length === 0 || seq(batch[0]) !== cursor + 1)) {
          // Further behind than `maxBacklog`, or what it missed has expired.
          throw new FeedGapError(cursor, latest);
        }
        for (const item of batch) {
          const n = seq(item);
          if (n <= cursor) continue;
          if (gaps === "throw" && n !== cursor + 1) throw new FeedGapError(cursor, latest);
          cursor = n;
          yield item;
        }
      }
    } finally {
      if (--subscribers === 0) {
        stop();
        onIdle?.();
      }
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
 * A subscriber with `gaps: "throw"` could not be given every item after its number: it is further
 * behind than `maxBacklog`, what it missed has expired, or its number is ahead of the sequence (a
 * store restored from a backup). Start again from a fresh snapshot.
 *
 * @example
 * ```ts
 * import { FeedGapError } from "shell/data";
 *
 * const error = new FeedGapError(12, 480);
 * console.log(error.message); // the subscriber had 12, the sequence is at 480: ...
 * ```
 * @see docs/data.md - A live page
 */
export class FeedGapError extends Error {
  /** `"FeedGapError"`. */
  override name = "FeedGapError";
  /**
   * The error for a subscriber that had `since` while the sequence is at `latest`.
   *
   * @param since The last number the subscriber had.
   * @param latest The newest number of the sequence.
   */
  constructor(readonly since: number, readonly latest: number) {
    super(
      `the subscriber had ${since}, the sequence is at ${latest}: what lies between cannot be ` +
        `sent (too far behind, expired, or ahead of the store); start from a new snapshot`,
    );
  }
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
 * @see docs/data.md - Live updates
 */
export function sinceOf(req: Request, url: URL): number | undefined {
  for (const value of [req.headers.get("last-event-id"), url.searchParams.get("since")]) {
    if (value && /^\d{1,15}$/.test(value)) return Number(value);
  }
  return undefined;
}
