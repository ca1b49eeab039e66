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

export interface FeedOptions {
  /** Recent items kept in memory for subscribers slightly behind (default 50). */
  ringSize?: number;
  /** Also read the counter this often: needed only when other processes write the same file. */
  pollIntervalMs?: number;
}

export interface SubscribeOptions {
  /** Ends the subscription (and, with the last one, the watch). */
  signal?: AbortSignal;
  /** After a long absence, only the newest this many missed items are sent (default 50). */
  maxBacklog?: number;
}

export interface Feed<T extends Logged> {
  /**
   * Items with an id above `since`, the missed ones first, then live ones, in id order; with no
   * `since`, only items appended from now on. Ends when `signal` aborts; throws if the watch fails.
   */
  subscribe(since?: number, options?: SubscribeOptions): AsyncGenerator<T>;
  readonly subscribers: number;
}

const feeds = new WeakMap<Deno.Kv, Map<KvLog<Logged>, Feed<Logged>>>();

/** The feed of `log` in `kv`: one per store and log in this isolate, made on first use. */
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
 */
export function sinceOf(req: Request, url: URL): number | undefined {
  for (const value of [req.headers.get("last-event-id"), url.searchParams.get("since")]) {
    if (value && /^\d{1,15}$/.test(value)) return Number(value);
  }
  return undefined;
}
