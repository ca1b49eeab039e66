/**
 * @module
 * A collection's items as a live page holds them: the shapes the server sends (`Entity`,
 * `Change`, `Snapshot`) and applying a change to what a page has. Versionstamps decide: a change
 * older than what the page already has is ignored, so a change seen twice - in the snapshot and
 * again as an event, or applied from an action's answer before its event arrives - changes
 * nothing. Pure and browser-safe: the server's collections (`lib/kv/collection/`) and the islands'
 * hook (`use_live_collection.ts`) share it.
 */

/**
 * One item of a collection as it is read: its id, its value, and the versionstamp of the commit
 * that wrote it (for an update that must not overwrite a newer one: `{ versionstamp }`).
 *
 * @example
 * ```ts
 * import type { Entity } from "shell/runtime";
 *
 * type Task = { title: string; state: "todo" | "doing" | "done" };
 * const task: Entity<Task> = {
 *   id: "01JD0Q8ZV3Q4W5E6R7T8Y9U0IP",
 *   value: { title: "Write the docs", state: "todo" },
 *   versionstamp: "000000000000000a0000",
 * };
 * ```
 * @see docs/data.md - Collections
 */
export interface Entity<T> {
  /** Made by the collection: sortable by creation (a ULID), never reused. */
  readonly id: string;
  /** The item, as the collection's schema made it. */
  readonly value: T;
  /** Of the commit that last wrote the item: later commits have greater ones. */
  readonly versionstamp: string;
}

/**
 * One change to a view of a collection (all of it, or the items with one index value), as its
 * change feed sends it: `create` (the item appeared in the view), `update`, or `delete` (it left
 * the view: deleted, or its index value changed). `seq` numbers the view's changes 1, 2, 3, ...
 * with no gaps: the SSE event id, sent back as `Last-Event-ID`.
 *
 * @example
 * ```ts
 * import type { Change } from "shell/runtime";
 *
 * function describe(change: Change<{ title: string }>): string {
 *   return change.op === "delete" ? `${change.id} left` : `${change.value?.title} (${change.op})`;
 * }
 * ```
 * @see docs/data.md - A live page
 */
export interface Change<T> {
  /** The view's change number: 1, 2, 3, ... with no gaps. */
  readonly seq: number;
  /** What happened to the item, as the view sees it. */
  readonly op: "create" | "update" | "delete";
  /** The item's id. */
  readonly id: string;
  /** The item after the change; absent for `delete`. */
  readonly value?: T;
  /** The versionstamp of the commit that made the change. */
  readonly versionstamp: string;
}

/**
 * A view's items at one point of its change feed: the page renders `items` and its live hook
 * applies the changes after `seq`.
 *
 * @example
 * ```ts
 * import type { Snapshot } from "shell/runtime";
 *
 * const empty: Snapshot<{ title: string }> = { seq: 0, versionstamp: "", items: [] };
 * ```
 * @see docs/data.md - A live page
 */
export interface Snapshot<T> {
  /** The view's last change number when the snapshot was read. */
  readonly seq: number;
  /**
   * The versionstamp of that change (`""` before any): every change to the view up to it is in
   * `items`, so a change that old arriving later (an action's answer) is not applied again.
   */
  readonly versionstamp: string;
  /** The view's items, in id order (creation order); at most the snapshot's limit. */
  readonly items: readonly Entity<T>[];
}

/** What a live page holds: its items by id, and the ids it saw leave, with when. */
export interface LiveView<T> {
  readonly items: ReadonlyMap<string, Entity<T>>;
  /** The newest snapshot's versionstamp: no change as old or older is news. */
  readonly floor: string;
  /** Ids seen deleted (or leaving the view), with the change's versionstamp: an older change
   * that arrives later must not bring them back. The newest `MAX_GONE` are kept. */
  readonly gone: ReadonlyMap<string, string>;
}

/** Deleted ids remembered: far more than changes in flight at any time. */
export const MAX_GONE = 1_000;

/** The view a snapshot starts. */
export function viewOf<T>(snapshot: Snapshot<T>): LiveView<T> {
  const items = new Map(snapshot.items.map((item) => [item.id, item]));
  return { items, floor: snapshot.versionstamp, gone: new Map() };
}

/**
 * `view` with `snapshot` taken in: its items replace the view's, but for what the view has newer
 * than the snapshot (an action's answer applied since): items changed or added after it, and
 * items seen deleted after it.
 */
export function withSnapshot<T>(view: LiveView<T>, snapshot: Snapshot<T>): LiveView<T> {
  const floor = snapshot.versionstamp > view.floor ? snapshot.versionstamp : view.floor;
  const items = new Map<string, Entity<T>>();
  for (const item of view.items.values()) {
    if (item.versionstamp > floor) items.set(item.id, item);
  }
  for (const item of snapshot.items) {
    const had = items.get(item.id);
    const goneAt = view.gone.get(item.id);
    if ((had && had.versionstamp >= item.versionstamp) || (goneAt ?? "") >= item.versionstamp) {
      continue;
    }
    items.set(item.id, item);
  }
  return { items, floor, gone: view.gone };
}

/** `view` with `change` applied; the same object when the change is not newer than the view. */
export function applyChange<T>(view: LiveView<T>, change: Omit<Change<T>, "seq">): LiveView<T> {
  if (change.versionstamp <= view.floor) return view; // the snapshot has it, or newer
  const had = view.items.get(change.id);
  const goneAt = view.gone.get(change.id);
  if (had && had.versionstamp >= change.versionstamp) return view;
  if (goneAt !== undefined && goneAt >= change.versionstamp) return view;
  const items = new Map(view.items);
  if (change.op === "delete") {
    items.delete(change.id);
    const gone = new Map(view.gone);
    gone.delete(change.id);
    gone.set(change.id, change.versionstamp);
    if (gone.size > MAX_GONE) gone.delete(gone.keys().next().value!);
    return { items, floor: view.floor, gone };
  }
  const { id, value, versionstamp } = change;
  items.set(id, { id, value: value as T, versionstamp });
  return { items, floor: view.floor, gone: view.gone };
}
