/**
 * @module
 * A collection's change feeds: for each view (the whole collection, or one value of a non-unique
 * index), the changes its writes logged, followed live with one KV watch per view and process
 * (`feed.ts`), and read back from any number on (a page reconnecting). A view's feed exists while
 * someone follows it and is dropped with its last subscriber, so the values clients ask for cannot
 * pile up feeds; and a collection's clients take places, of which an endpoint allows a bounded
 * number.
 */
import type { Change } from "../../shared/live_view.ts";
import { type Feed, type FeedOptions, followSequence, sharedFeed } from "../feed.ts";
import { type Declared, keys, type StoredChange, valueName, type View } from "./declared.ts";

/** Up to `limit` changes of `view` numbered above `cursor` (the newest of them), oldest first. */
async function changesAfter(
  kv: Deno.Kv,
  d: Declared,
  view: View,
  cursor: number,
  limit: number,
): Promise<Change<object>[]> {
  const { events } = keys.log(d, view);
  const newestFirst: Change<object>[] = [];
  const selector = { prefix: events, start: [...events, cursor + 1] };
  for await (const entry of kv.list<StoredChange>(selector, { reverse: true, limit })) {
    const { op, id, value } = entry.value;
    const seq = entry.key.at(-1) as number;
    newestFirst.push(
      value === undefined
        ? { seq, op, id, versionstamp: entry.versionstamp }
        : { seq, op, id, value: value as object, versionstamp: entry.versionstamp },
    );
  }
  return newestFirst.reverse();
}

interface Feeds {
  byView: Map<string, Feed<Change<object>>>;
  /** Places taken by clients following any of the collection's views, in this process. */
  open: number;
}

const registry = new WeakMap<Deno.Kv, WeakMap<Declared, Feeds>>();

function feedsOf(kv: Deno.Kv, d: Declared): Feeds {
  let ofStore = registry.get(kv);
  if (!ofStore) registry.set(kv, ofStore = new WeakMap());
  let feeds = ofStore.get(d);
  if (!feeds) ofStore.set(d, feeds = { byView: new Map(), open: 0 });
  return feeds;
}

/** The feed of `view`'s changes in `kv`: one per view in this process while anyone follows it. */
export function changeFeed(
  kv: Deno.Kv,
  d: Declared,
  view: View,
  options: FeedOptions,
): Feed<Change<object>> {
  const source = {
    counter: keys.log(d, view).latest,
    read: (cursor: number, limit: number) => changesAfter(kv, d, view, cursor, limit),
    seq: (change: Change<object>) => change.seq,
  };
  const name = view.index === undefined ? "" : `${view.index}\u0000${valueName(view.value)}`;
  return sharedFeed(
    feedsOf(kv, d).byView,
    name,
    (onIdle) => followSequence(kv, source, options, onIdle),
  );
}

/**
 * Takes one of `max` places for a client following `d`'s changes in this process (over all its
 * views), at once - before the stream starts, so a burst of requests cannot all pass - and returns
 * the function that gives it back; `undefined` when all are taken.
 */
export function takePlace(kv: Deno.Kv, d: Declared, max: number): (() => void) | undefined {
  const feeds = feedsOf(kv, d);
  if (feeds.open >= max) return undefined;
  feeds.open++;
  let given = false;
  return () => {
    if (!given) feeds.open--;
    given = true;
  };
}
