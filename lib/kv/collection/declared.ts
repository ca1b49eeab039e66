/**
 * @module
 * A collection as its declaration resolved it, and where it keeps things in KV. Under the
 * collection's name:
 *
 * | key                                          | value                                      |
 * | -------------------------------------------- | ------------------------------------------ |
 * | `[name, "items", id]`                        | the item                                   |
 * | `[name, "index", index, value, id]`          | a copy of the item (non-unique index)      |
 * | `[name, "unique", index, value]`             | `{ id, value }`: the item (unique index)   |
 * | `[name, "log", "latest"]`                    | the collection's last change number        |
 * | `[name, "log", "events", seq]`               | change `seq` of the collection (expiring)  |
 * | `[name, "logs", index, value, "latest"]`     | the last change number of one index value  |
 * | `[name, "logs", index, value, "events", seq]`| change `seq` of that value's view          |
 * | `[name, "reindex"]`                          | where a stopped `reindex` goes on from     |
 *
 * Index entries hold copies, not ids, so that listing by index is one range query; they are
 * written in the same commit as the item, so they always agree with it.
 */
import { keySize, MAX_KEY_BYTES } from "../limits.ts";
import type { CollectionSchema } from "./schema.ts";

/** One index, resolved: its name, whether it is unique, and the value it gives an item. */
export interface ResolvedIndex {
  readonly name: string;
  readonly unique: boolean;
  /**
   * How the declaration spells the index's values, as its text says (the field's name or the
   * key's source, and the normalize's): a `reindex` stopped under another spelling starts over.
   */
  readonly spelling: string;
  /** The item's value in this index (normalised), or `undefined` for an item left out of it. */
  valueOf(item: object): Deno.KvKeyPart | undefined;
  /**
   * A value asked for (`find`, `list`'s value and prefix, `checkAbsent`, a view) as the index
   * keeps it: a string through the index's `normalize`, anything else as it is.
   */
  asked(value: unknown): unknown;
}

/** A view of a collection: all of it, or the items with one value of a non-unique index. */
export interface View {
  readonly index?: string;
  readonly value?: Deno.KvKeyPart;
}

/** What a stored change holds; its number is in its key, its versionstamp is its commit's. */
export interface StoredChange {
  op: "create" | "update" | "delete";
  id: string;
  value?: unknown;
}

export interface Declared {
  readonly name: string;
  readonly schema: CollectionSchema;
  readonly indexes: ReadonlyMap<string, ResolvedIndex>;
  /** field -> from -> the values it may go to (as strings: states are object keys). */
  readonly transitions: ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;
  /** How long change events are kept for pages reconnecting, in ms. */
  readonly retainMs: number;
}

export const keys = {
  item: (d: Declared, id: string): Deno.KvKey => [d.name, "items", id],
  items: (d: Declared): Deno.KvKey => [d.name, "items"],
  index: (d: Declared, index: string, value: Deno.KvKeyPart, id: string): Deno.KvKey => [
    d.name,
    "index",
    index,
    value,
    id,
  ],
  unique: (d: Declared, index: string, value: Deno.KvKeyPart): Deno.KvKey => [
    d.name,
    "unique",
    index,
    value,
  ],
  /** Where a `reindex` run that was stopped goes on from. */
  reindex: (d: Declared): Deno.KvKey => [d.name, "reindex"],
  /** The prefix a listing reads: the whole collection, an index, or one value of it. */
  listing(d: Declared, view: View): Deno.KvKey {
    if (view.index === undefined) return keys.items(d);
    const kind = d.indexes.get(view.index)!.unique ? "unique" : "index";
    return view.value === undefined
      ? [d.name, kind, view.index]
      : [d.name, kind, view.index, view.value];
  },
  /** The change log of a view: its counter, and the prefix of its events. */
  log(d: Declared, view: View): { latest: Deno.KvKey; events: Deno.KvKey } {
    const base = view.index === undefined
      ? [d.name, "log"]
      : [d.name, "logs", view.index, view.value!];
    return { latest: [...base, "latest"], events: [...base, "events"] };
  },
};

/**
 * True when two index values are the same key part: as KV tells them, -0 is not 0 (`===` says it
 * is, and a move between them was no move) and NaN is NaN.
 */
export function sameValue(a: Deno.KvKeyPart | undefined, b: Deno.KvKeyPart | undefined): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    return a.length === b.length && a.every((byte, i) => byte === b[i]);
  }
  return Object.is(a, b);
}

/** A key part that names `value` in a map: distinct for distinct key parts. */
export function valueName(value: Deno.KvKeyPart | undefined): string {
  if (value === undefined) return "";
  if (value instanceof Uint8Array) return `u8:${[...value].join(",")}`;
  // -0 apart from 0, as KV keeps it (String(-0) is "0").
  return `${typeof value}:${Object.is(value, -0) ? "-0" : String(value)}`;
}

/**
 * True when `value` can be a value of `d`'s `index` at all: a key part whose longest key (an index
 * entry's, or a change event's; a unique index's own) fits KV. What a client asks for is checked
 * with it before any of it reaches KV.
 */
export function isIndexValue(d: Declared, index: string, value: unknown): value is Deno.KvKeyPart {
  if (!isKeyPart(value)) return false;
  // Text with a lone surrogate (half a character) is no value any item has (`hasHalfCharacter`):
  // KV reads it as U+FFFD, and would look at the items holding that character instead.
  if (hasHalfCharacter(value)) return false;
  // A unique index writes one key per value, no entry per item and no change log.
  if (d.indexes.get(index)?.unique) return keySize(keys.unique(d, index, value)) <= MAX_KEY_BYTES;
  const longest = Math.max(
    keySize(keys.index(d, index, value, "0".repeat(26))),
    keySize([...keys.log(d, { index, value }).events, Number.MAX_SAFE_INTEGER]),
  );
  return longest <= MAX_KEY_BYTES;
}

export function isKeyPart(value: unknown): value is Deno.KvKeyPart {
  return typeof value === "string" || typeof value === "boolean" || typeof value === "bigint" ||
    (typeof value === "number" && !Number.isNaN(value)) || value instanceof Uint8Array;
}

/**
 * Whether `value` is text with a lone surrogate, which KV keeps in a key as U+FFFD: as an index
 * value it would be another value's key (`"a\uD800"` is `"a\uFFFD"`'s).
 */
export function hasHalfCharacter(value: unknown): boolean {
  return typeof value === "string" && !value.isWellFormed();
}
