/**
 * @module
 * `collection(name, { schema, indexes, transitions })`: a product's entities in Deno KV, declared
 * once. Writes are validated by the schema, get a generated id (a ULID: sortable by creation), keep
 * their index entries and their change events in the same atomic commit as the item, and refuse
 * what would conflict (a unique value taken, a versionstamp that is not the item's any more) or
 * what the state machine does not allow; reads list by index with opaque cursors; every write is
 * a change that live pages follow (`changeStream`). See `declared.ts` for where it all lives.
 */
import type { Change, Entity, Snapshot } from "../../shared/live_view.ts";
import { httpError } from "../../shared/http_error.ts";
import type { Feed, SubscribeOptions } from "../feed.ts";
import { changeFeed } from "./changes.ts";
import { absenceCheck, itemCheck } from "./checks.ts";
import { isIndexValue, type View } from "./declared.ts";
import { register } from "./registry.ts";
import { type Declaration, resolveDeclaration } from "./resolve.ts";
import type { CollectionSchema, InputOf, OutputOf } from "./schema.ts";
import { reindex, type ReindexOptions, type ReindexReport } from "./reindex.ts";
import { findItem, getItem, listItems, PAGE, type Page, snapshotOf } from "./read.ts";
import { type Skip, skip } from "./skip.ts";
import { describe, type Write } from "./together.ts";
import {
  createItem,
  type CreateOptions,
  deleteItem,
  type Patch,
  planCreate,
  planDelete,
  planUpdate,
  type SkippablePatch,
  updateItem,
  type WriteOptions,
} from "./write.ts";

/**
 * One index of a collection: `key` is a field of the item, or a function of it, whose value
 * (a string, number, bigint, boolean or `Uint8Array`; `undefined` or `null` leaves the item out)
 * the index sorts by. A `unique` index refuses a second item with the same value (`ConflictError`,
 * 409); a non-unique one lists the items of one value, and has a change feed per value. With
 * `normalize`, a string value is kept as it gives it, and every value asked for goes through it
 * too: `" Ada@Example.com"` finds, lists, checks and collides with `"ada@example.com"`.
 *
 * @example
 * ```ts
 * import type { IndexSpec } from "shell/data";
 *
 * type Task = { title: string; board: string; state: string };
 * const byBoard: IndexSpec<Task> = { key: "board" };
 * const bySlug: IndexSpec<Task> = {
 *   key: (task) => `${task.board}/${task.title.toLowerCase()}`,
 *   unique: true,
 * };
 * type Member = { email: string };
 * const byEmail: IndexSpec<Member> = {
 *   key: "email",
 *   unique: true,
 *   normalize: (email) => email.trim().toLowerCase(),
 * };
 * ```
 * @see docs/data.md - Collections
 */
export interface IndexSpec<T> {
  /** A field of the item, or a function of it: the value the item has in this index. */
  key: (keyof T & string) | ((item: T) => Deno.KvKeyPart | null | undefined);
  /** At most one item per value (default `false`). */
  unique?: boolean;
  /**
   * The one spelling of a string value: applied to the item's value on every write and to every
   * value asked for - `find`, `list`'s `value` and `prefix`, `checkAbsent`, a live view - so they
   * meet however the value was cased or spaced. The item keeps its field as written. It must give
   * its own answers back unchanged (`trim`, `toLowerCase`, `normalize("NFC")` do, and so do they
   * in that order; NFC before `toLowerCase` does not, for some Greek with a iota below; one that
   * does not is a `TypeError` where it is used). Given to an index that has items already, it
   * reaches them once `reindex` (`deno task kv:reindex <name>`) wrote their entries again.
   */
  normalize?: (value: string) => string;
}

/**
 * A collection's state machines: for a field, the values each value may go to. An update that
 * changes the field along any other way is refused with a `TransitionError` (409).
 *
 * @example
 * ```ts
 * import type { Transitions } from "shell/data";
 *
 * type Task = { title: string; state: "todo" | "doing" | "done" };
 * const transitions: Transitions<Task> = {
 *   state: { todo: ["doing"], doing: ["todo", "done"], done: ["doing"] },
 * };
 * ```
 * @see docs/data.md - States and transitions
 */
export type Transitions<T> = {
  [F in keyof T]?: T[F] extends PropertyKey ? { [From in T[F]]?: readonly T[F][] } : never;
};

/**
 * How a collection's changes reach live pages.
 *
 * @example
 * ```ts
 * import type { LiveOptions } from "shell/data";
 *
 * // Pages away for up to a day catch up change by change; later ones get a fresh snapshot.
 * const live: LiveOptions = { retainMs: 24 * 3_600_000, maxBacklog: 500 };
 * ```
 * @see docs/data.md - A live page
 */
export interface LiveOptions {
  /**
   * How long change events are kept for pages that reconnect: whole milliseconds, a year at most
   * (default 1 hour).
   */
  retainMs?: number;
  /**
   * A page further behind than this many changes gets a fresh snapshot instead of every change:
   * 1 to 10,000 (default 200).
   */
  maxBacklog?: number;
  /** Recent changes each view's feed keeps in memory for its followers: 1 to 10,000 (default 50). */
  ringSize?: number;
  /**
   * Also read each followed view's counter this often, 10 ms to an hour: only when other processes
   * write the file (left out: never).
   */
  pollIntervalMs?: number;
}

/**
 * What `collection()` is given: the schema every write is checked with, the indexes, the state
 * machines and how changes reach live pages.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { collection, type CollectionOptions } from "shell/data";
 *
 * const Note = v.object({ text: v.pipe(v.string(), v.maxLength(500)), pinned: v.boolean() });
 * const options: CollectionOptions<typeof Note, { pinned: { key: "pinned" } }> = {
 *   schema: Note,
 *   indexes: { pinned: { key: "pinned" } },
 * };
 * const notes = collection("notes", options);
 * console.log(notes.name);
 * ```
 * @see docs/data.md - Collections
 */
export interface CollectionOptions<
  // deno-lint-ignore no-explicit-any -- any input
  S extends CollectionSchema<any>,
  I extends Record<string, IndexSpec<OutputOf<S>>>,
> {
  /** A schema of an object (valibot's, or any Standard Schema): every write is checked with it. */
  schema: S;
  /** The indexes, by name. (`NoInfer`: the item's type comes from the schema alone.) */
  indexes?: I & Record<string, IndexSpec<NoInfer<OutputOf<S>>>>;
  /** State machines, by field. */
  transitions?: Transitions<OutputOf<S>>;
  /** How changes reach live pages. */
  live?: LiveOptions;
}

/**
 * A listing: the whole collection in id (creation) order, or by an index - the items of one
 * `value` in id order, or (no `value`) all of them in index value order, or only those whose value
 * starts with `prefix`. `cursor` continues after the page that returned it.
 *
 * @example
 * ```ts
 * import type { ListOptions } from "shell/data";
 *
 * const firstPage: ListOptions<"byBoard"> = { index: "byBoard", value: "team", limit: 20 };
 * ```
 * @see docs/data.md - Querying
 */
export interface ListOptions<I extends string> {
  /** The index to list by; none: the whole collection by id. */
  index?: I;
  /** One value of a non-unique index: its items only. */
  value?: Deno.KvKeyPart;
  /**
   * With `index` and no `value`: the items whose index value is a string starting with this, in
   * index value order (a search as the user types: `{ index: "byName", prefix: "smi" }`). It goes
   * through the index's `normalize`, as values do: give the index one (`(name) =>
   * name.toLowerCase()`) for a search that ignores case. An index per tenant puts the tenant first
   * (`` `${clinic}/${name}` ``).
   */
  prefix?: string;
  /** Items in the page: 1 to 1,000 (default 50). */
  limit?: number;
  /**
   * From a previous page: where this one starts. A client's is checked (400 if not this listing's).
   */
  cursor?: string | null;
  /** Last first. */
  reverse?: boolean;
}

/**
 * A view a live page follows: the whole collection, or the items of one value of a non-unique
 * index - with how many items its snapshot holds.
 *
 * @example
 * ```ts
 * import type { ViewOptions } from "shell/data";
 *
 * const board: ViewOptions<"byBoard"> = { index: "byBoard", value: "team", limit: 200 };
 * ```
 * @see docs/data.md - A live page
 */
export interface ViewOptions<I extends string> {
  /** A non-unique index; none: the whole collection. */
  index?: I;
  /** Its value (required with `index`). A client's is checked (400 if it cannot be one). */
  value?: Deno.KvKeyPart;
  /** Items in a snapshot: 1 to 1,000 (default 100), the first in id order. */
  limit?: number;
}

/**
 * A collection declared with `collection()`. Every method takes the store first (`kvOf(ctx)`).
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { type Collection, collection } from "shell/data";
 *
 * const Tag = v.object({ name: v.pipe(v.string(), v.minLength(1), v.maxLength(40)) });
 * const tags: Collection<v.InferOutput<typeof Tag>> = collection("tags", { schema: Tag });
 *
 * const kv = await Deno.openKv(":memory:");
 * const tag = await tags.create(kv, { name: "urgent" });
 * await tags.update(kv, tag.id, { name: "soon" }, { versionstamp: tag.versionstamp });
 * ```
 * @see docs/data.md - Collections
 */
export interface Collection<T, In = T, I extends string = string, U extends string = never> {
  /** Its name: the first part of all its keys. */
  readonly name: string;
  /**
   * Adds an item: parsed with the schema (`ValidationError`, 422), given an id, indexed and
   * logged in one commit (`ConflictError`, 409, when a unique value is taken); with `checks`,
   * only while those items of other collections are as read (`ConflictError`, 409).
   */
  create(kv: Deno.Kv, input: In, options?: CreateOptions): Promise<Entity<T>>;
  /** The item with `id`, or `null` (also for anything that is not an id). */
  get(kv: Deno.Kv, id: string): Promise<Entity<T> | null>;
  /** The item with `value` in the unique index `index`, or `null`. */
  find(kv: Deno.Kv, index: U, value: Deno.KvKeyPart): Promise<Entity<T> | null>;
  /** A page of items: all by id, or by an index (see {@link ListOptions}). */
  list(kv: Deno.Kv, options?: ListOptions<I | U>): Promise<Page<T>>;
  /**
   * Changes fields of the item: `patch` (or what a function of the item returns - run again on
   * the item as it then is when another write wins the race) over the item, parsed with the
   * schema, checked against the state machines; with `versionstamp`, only if the item is still
   * that version (`ConflictError`, 409). A missing item is a 404. An update that changes nothing
   * writes nothing.
   */
  update(kv: Deno.Kv, id: string, patch: Patch<T>, options?: WriteOptions): Promise<Entity<T>>;
  /** `update` with a function that may return `skip`: then nothing is written, and it resolves so. */
  update(
    kv: Deno.Kv,
    id: string,
    patch: SkippablePatch<T>,
    options?: WriteOptions,
  ): Promise<Entity<T> | Skip>;
  /**
   * Deletes the item, its index entries, and logs it; with `versionstamp`, only if the item is
   * still that version (`ConflictError`, 409). Resolves with the commit's versionstamp, or `null`
   * when there was no such item.
   */
  delete(kv: Deno.Kv, id: string, options?: WriteOptions): Promise<string | null>;
  /**
   * `create`, described for `commitAll`, which commits it with other writes, all or none. Its
   * `id` is the new item's, known before the commit (for another write of the commit to hold).
   */
  creating(input: In, options?: CreateOptions): Write<Entity<T>>;
  /** `update`, described for `commitAll`, which commits it with other writes, all or none. */
  updating(id: string, patch: Patch<T>, options?: WriteOptions): Write<Entity<T>>;
  /** `updating` with a function that may return `skip`: its result is then `skip`. */
  updating(
    id: string,
    patch: SkippablePatch<T>,
    options?: WriteOptions,
  ): Write<Entity<T> | Skip>;
  /** `delete`, described for `commitAll`, which commits it with other writes, all or none. */
  deleting(id: string, options?: WriteOptions): Write<string | null>;
  /**
   * For another collection's write that holds only while this item is as it was read (`checks`):
   * `counts.create(kv, count, { checks: [takes.check(take)] })` commits only while `take` is
   * unchanged, in every worker and instance.
   */
  check(entity: Pick<Entity<T>, "id" | "versionstamp">): Deno.AtomicCheck;
  /**
   * For another collection's write that holds only while no item of this one has `value` in the
   * unique index `index` (`checks`): `reservations.create(kv, reservation, { checks:
   * [loans.checkAbsent("openByBook", book)] })` commits only while no loan is open for the book,
   * in every worker and instance (`ConflictError`, 409, `"exists"`, when one is; on the collection
   * written, the item written is none). `value` as the index's key gives it (as for `find`).
   *
   * For a value too long for any item to hold, the check holds (`find` finds none).
   *
   * @throws {TypeError} When `index` is not a unique index, or `value` is not a key part.
   */
  checkAbsent(index: U, value: Deno.KvKeyPart): Deno.AtomicCheck;
  /** A view's first items and its last change number: what a live page starts from. */
  snapshot(kv: Deno.Kv, view?: ViewOptions<I>): Promise<Snapshot<T>>;
  /**
   * A view's changes after a number, then live ones, exactly once each, in order: one KV watch
   * per view and process. A subscriber that cannot have every change since its number gets a
   * `FeedGapError` (start again from a snapshot).
   */
  changes(kv: Deno.Kv, view?: Omit<ViewOptions<I>, "limit">): Feed<Change<T>>;
  /**
   * Makes every item's index entries again as the declaration now spells them - after an index
   * was added, given a `normalize` or another `key`, or dropped - and deletes the stale ones:
   * in batches, one item's atomic commit at a time (a write of another worker that lands first
   * wins), resuming where a stopped run was. An item already indexed is not written. A unique
   * value two items now have is reported with both ids, never settled by dropping one.
   * `deno task kv:reindex <name>` runs it on the app's store.
   *
   * @throws {Error} The signal's reason (an abort's `DOMException`) when it ends the run: the
   * next run goes on from there.
   */
  reindex(kv: Deno.Kv, options?: ReindexOptions): Promise<ReindexReport>;
}

/**
 * Declares a collection: `schema` checks every write, `indexes` (unique or not, on a field or a
 * function of the item) are kept in the same atomic commit as the item, `transitions` are the
 * state machines its updates follow, and every write is a change that live pages receive. Makes no
 * KV call.
 *
 * @param name The collection's name, the first part of its keys (`["tasks", "items", id]`): one
 * nothing else in the store uses.
 * @param options The schema, indexes, state machines and live options.
 * @returns The collection.
 * @throws {TypeError} When the declaration is malformed (an empty name, an index without a key,
 * ...).
 *
 * @example
 * ```ts
 * // routes/_board/tasks.ts
 * import * as v from "valibot";
 * import { collection } from "shell/data";
 *
 * export const tasks = collection("tasks", {
 *   schema: v.object({
 *     title: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120)),
 *     board: v.string(),
 *     state: v.picklist(["todo", "doing", "done"]),
 *   }),
 *   indexes: {
 *     byBoard: { key: "board" },
 *     bySlug: { key: (task) => `${task.board}/${task.title.toLowerCase()}`, unique: true },
 *   },
 *   transitions: { state: { todo: ["doing"], doing: ["todo", "done"], done: ["doing"] } },
 * });
 * ```
 * @see docs/data.md - Collections
 */
export function collection<
  // deno-lint-ignore no-explicit-any -- any input
  S extends CollectionSchema<any>,
  // deno-lint-ignore ban-types -- no indexes: an empty record
  const I extends Record<string, IndexSpec<OutputOf<S>>> = {},
>(
  name: string,
  options: CollectionOptions<S, I>,
): Collection<OutputOf<S>, InputOf<S>, ListedIndexes<I>, UniqueIndexes<I>> {
  const d = resolveDeclaration(name, options as unknown as Declaration);
  const { maxBacklog = 200, ringSize = 50, pollIntervalMs } = options.live ?? {};
  const view = (given: View = {}): View => {
    if (given.index === undefined) return {};
    const index = d.indexes.get(given.index);
    if (!index || index.unique) {
      throw new TypeError(`${name}: "${given.index}" is not a non-unique index`);
    }
    return { index: given.index, value: index.asked(given.value) as Deno.KvKeyPart };
  };
  // deno-lint-ignore no-explicit-any -- the types are the declaration's; the code is for any item
  const self: Collection<any, any, any, any> = {
    name,
    create: (kv, input, write) => createItem(kv, d, input, write),
    get: (kv, id) => getItem(kv, d, id),
    find: (kv, index, value) => findItem(kv, d, index, value),
    list: (kv, query = {}) => listItems(kv, d, query),
    // The overloads say which result may be `skip`: only one of a function that may return it.
    update: (kv, id, patch, write) => updateItem(kv, d, id, patch, write) as Promise<Entity<never>>,
    delete: (kv, id, write) => deleteItem(kv, d, id, write),
    creating: (input, write) => describe(planCreate(d, input, write), ({ entity }) => entity!),
    updating: (id, patch, write) =>
      describe(
        planUpdate(d, id, patch, write),
        ({ entity, skipped }) => skipped ? skip : entity!,
      ) as Write<Entity<never>>,
    deleting: (id, write) => describe(planDelete(d, id, write), ({ written }) => written ?? null),
    check: ({ id, versionstamp }) => itemCheck(d, id, versionstamp),
    checkAbsent: (index, value) => absenceCheck(d, index, value),
    reindex: (kv, options) => reindex(kv, d, options),
    async snapshot(kv, { limit = 100, ...given } = {}) {
      const v = view(given);
      if (v.index !== undefined && !isIndexValue(d, v.index, v.value)) {
        return { seq: 0, versionstamp: "", items: [] };
      }
      return await snapshotOf(kv, d, v, Math.min(PAGE.max, limit));
    },
    changes(kv, given = {}) {
      const v = view(given);
      if (v.index !== undefined && !isIndexValue(d, v.index, v.value)) {
        throw httpError(400, `Not a value of ${v.index}.`);
      }
      const feed = changeFeed(kv, d, v, { ringSize, pollIntervalMs });
      return {
        subscribe: (since?: number, options?: SubscribeOptions) =>
          feed.subscribe(since, { maxBacklog, gaps: "throw", ...options }),
        get subscribers() {
          return feed.subscribers;
        },
      };
    },
  };
  register(self, d);
  return self;
}

/**
 * The names of a declaration's unique indexes: what `find` takes.
 *
 * @example
 * ```ts
 * import type { UniqueIndexes } from "shell/data";
 *
 * type Names = UniqueIndexes<{ bySlug: { key: "slug"; unique: true }; byTag: { key: "tag" } }>;
 * const name: Names = "bySlug";
 * ```
 * @see docs/data.md - Querying
 */
export type UniqueIndexes<I> =
  & { [K in keyof I]: I[K] extends { unique: true } ? K : never }[keyof I]
  & string;

/**
 * The names of a declaration's non-unique indexes: what views and live pages follow.
 *
 * @example
 * ```ts
 * import type { ListedIndexes } from "shell/data";
 *
 * type Names = ListedIndexes<{ bySlug: { key: "slug"; unique: true }; byTag: { key: "tag" } }>;
 * const name: Names = "byTag";
 * ```
 * @see docs/data.md - Querying
 */
export type ListedIndexes<I> = Exclude<keyof I & string, UniqueIndexes<I>>;
