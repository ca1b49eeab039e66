/**
 * @module
 * `useLiveCollection(url, snapshot)`: a view of a collection kept live in an island. It starts from
 * the snapshot the server rendered the page with (an island prop), follows the view's
 * `changeStream` from that snapshot's number (`useFeed`: backoff, pauses while hidden, resumes
 * where it was), and applies each change by versionstamp (`live_view.ts`), so a change seen twice,
 * or an action's answer applied before its event, changes nothing. A `snapshot` event (the page
 * was away too long) replaces the items. Browser-safe.
 */
import { parse } from "devalue";
import { useCallback, useMemo, useState } from "react";
import {
  applyChange,
  type Change,
  type Entity,
  type Snapshot,
  viewOf,
  withSnapshot,
} from "./live_view.ts";
import { type FeedStatus, useFeed } from "./use_feed.ts";

/**
 * What `useLiveCollection` gives an island: the view's items now, the stream's status, and
 * `apply` for a change the island learned first (an action's answer).
 *
 * @example
 * ```ts
 * import type { LiveCollection } from "shell/runtime";
 *
 * const count = (live: LiveCollection<{ title: string }>) => live.items.length;
 * ```
 * @see docs/data.md - A live page
 */
export interface LiveCollection<T> {
  /** The view's items, in id (creation) order, or newest first with `order: "newest"`. */
  items: Entity<T>[];
  /** Where the change stream is. */
  status: FeedStatus;
  /**
   * Applies a change now - what an action returned (the item it created or updated, with its
   * versionstamp; or `{ op: "delete", id, versionstamp }`) - before its event arrives.
   */
  apply(change: Omit<Change<T>, "seq">): void;
}

/**
 * `useLiveCollection`'s options.
 *
 * @example
 * ```ts
 * import type { LiveCollectionOptions } from "shell/runtime";
 *
 * const newestFirst: LiveCollectionOptions = { order: "newest" };
 * ```
 * @see docs/data.md - A live page
 */
export interface LiveCollectionOptions {
  /** `"oldest"` first (id order, the default) or `"newest"` first. */
  order?: "oldest" | "newest";
}

/**
 * A view of a collection, live: starts from `snapshot` (rendered by the server, passed as an
 * island prop) and applies the changes the view's `changeStream` at `url` sends, from the
 * snapshot's number on - across reconnects and hidden tabs, with no change missed or applied
 * twice.
 *
 * @param url The view's `changeStream` endpoint (`/board/events`).
 * @param snapshot What the page was rendered with: `collection.snapshot(kv, view)`.
 * @param options The order of the items.
 * @returns The items, the stream's status, and `apply`.
 *
 * @example
 * ```tsx
 * // islands/Notes.tsx
 * import { type Snapshot, useLiveCollection } from "shell/runtime";
 *
 * type Note = { text: string };
 *
 * export default function Notes({ snapshot }: { snapshot: Snapshot<Note> }) {
 *   const { items, status } = useLiveCollection("/notes/events", snapshot);
 *   return (
 *     <ul aria-busy={status !== "live"}>
 *       {items.map((note) => <li key={note.id}>{note.value.text}</li>)}
 *     </ul>
 *   );
 * }
 * ```
 * @see docs/data.md - A live page
 */
export function useLiveCollection<T>(
  url: string,
  snapshot: Snapshot<T>,
  { order = "oldest" }: LiveCollectionOptions = {},
): LiveCollection<T> {
  const [view, setView] = useState(() => viewOf(snapshot));
  const status = useFeed(url, {
    since: snapshot.seq,
    on: {
      change: (event) => setView((had) => applyChange(had, parse(event.data) as Change<T>)),
      snapshot: (event) => setView((had) => withSnapshot(had, parse(event.data) as Snapshot<T>)),
    },
  });
  const items = useMemo(() => {
    const sorted = [...view.items.values()].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    return order === "newest" ? sorted.reverse() : sorted;
  }, [view.items, order]);
  const apply = useCallback(
    (change: Omit<Change<T>, "seq">) => setView((had) => applyChange(had, change)),
    [],
  );
  return { items, status, apply };
}
