/**
 * @module
 * Reading a collection: one item by id or by a unique index value, a page of items - all of them
 * in id (creation) order, or by an index, in index value then id order (all its values, one, or
 * the string values that start with a prefix) - and a snapshot for a live page. Pages end with an
 * opaque cursor: KV's own (which only ever positions within the listing's key range) behind a tag
 * naming the listing, so a cursor from another listing, or one a client made up, is refused with
 * 400 rather than read.
 */
import { httpError } from "../../shared/http_error.ts";
import type { Entity, Snapshot } from "../../shared/live_view.ts";
import { type Declared, isIndexValue, keys, type View } from "./declared.ts";
import { isId } from "./ids.ts";

/** Items in a page: 50 unless asked, never more than 1,000 (KV reads at most 1,000 at once). */
export const PAGE = { default: 50, max: 1_000 } as const;

export interface ListQuery extends View {
  prefix?: string;
  limit?: number;
  cursor?: string | null;
  reverse?: boolean;
}

/**
 * One page of a listing, and the cursor of the next (`null` after the last).
 *
 * @example
 * ```ts
 * import type { Page } from "shell/data";
 *
 * const titles = (page: Page<{ title: string }>) => page.items.map((item) => item.value.title);
 * ```
 * @see docs/data.md - Querying
 */
export interface Page<T> {
  /** The items, in the listing's order. */
  items: Entity<T>[];
  /** Pass it back for the next page; `null` on the last one. */
  cursor: string | null;
}

export async function getItem(
  kv: Deno.Kv,
  d: Declared,
  id: string,
): Promise<Entity<object> | null> {
  if (!isId(id)) return null;
  const entry = await kv.get<object>(keys.item(d, id));
  return entry.value === null ? null : { id, value: entry.value, versionstamp: entry.versionstamp };
}

export async function findItem(
  kv: Deno.Kv,
  d: Declared,
  index: string,
  value: unknown,
): Promise<Entity<object> | null> {
  const unique = d.indexes.get(index);
  if (!unique?.unique) {
    throw new TypeError(`${d.name}: "${index}" is not a unique index (declared: ${names(d)})`);
  }
  value = unique.asked(value);
  if (!isIndexValue(d, index, value)) return null;
  const entry = await kv.get<{ id: string; value: object }>(keys.unique(d, index, value));
  if (entry.value === null) return null;
  return { id: entry.value.id, value: entry.value.value, versionstamp: entry.versionstamp };
}

export async function listItems(
  kv: Deno.Kv,
  d: Declared,
  {
    index,
    value: valueAsked,
    prefix: startsWithQuery,
    limit = PAGE.default,
    cursor,
    reverse = false,
  }: ListQuery = {},
): Promise<Page<object>> {
  const resolved = index === undefined ? undefined : d.indexes.get(index);
  if (index !== undefined && !resolved) {
    throw new TypeError(`${d.name}: no index "${index}" (declared: ${names(d)})`);
  }
  const value = (resolved ? resolved.asked(valueAsked) : valueAsked) as Deno.KvKeyPart | undefined;
  if (startsWithQuery !== undefined && (index === undefined || value !== undefined)) {
    throw new TypeError(`${d.name}: a prefix lists an index's string values; give index, no value`);
  }
  if (index !== undefined && value !== undefined && d.indexes.get(index)!.unique) {
    throw new TypeError(`${d.name}: "${index}" is unique; find() reads the item of one value`);
  }
  if (index !== undefined && value !== undefined && !isIndexValue(d, index, value)) {
    return { items: [], cursor: null }; // no item can have it: its keys would not fit KV
  }
  const startsWith = startsWithQuery === undefined
    ? undefined
    : resolved!.asked(String(startsWithQuery)) as string;
  // A prefix no value can be is the start of none: any value starting with it is as long, or holds
  // its half character.
  if (startsWith !== undefined && !isIndexValue(d, index!, startsWith)) {
    return { items: [], cursor: null };
  }
  const prefix = keys.listing(d, { index, value });
  const unique = index !== undefined && d.indexes.get(index)!.unique;
  const tag = tagOf(prefix, reverse, startsWith);
  const count = Math.min(PAGE.max, Math.max(1, Math.floor(limit) || PAGE.default));
  const iterator = kv.list<object>(selectorOf(prefix, startsWith), {
    limit: count + 1, // one more: is there a next page?
    reverse,
    cursor: cursor ? kvCursor(cursor, tag) : undefined,
  });
  const items: Entity<object>[] = [];
  let next: string | null = null;
  let last = "";
  try {
    for await (const entry of iterator) {
      if (items.length === count) {
        next = `${tag}.${last}`;
        break;
      }
      items.push(entityOf(entry, unique));
      last = iterator.cursor;
    }
  } catch (error) {
    // KV checks the cursor as it starts: one that does not decode, or names too long a key.
    if (error instanceof TypeError && /cursor|Key too large/i.test(error.message)) {
      throw badCursor();
    }
    throw error;
  }
  return { items, cursor: next };
}

export async function snapshotOf(
  kv: Deno.Kv,
  d: Declared,
  view: View,
  limit: number,
): Promise<Snapshot<object>> {
  // The counter first: every change to the view up to its versionstamp is then in the listing; a
  // change after it and before the listing may be in both, and applying it twice changes nothing
  // (its versionstamp is not newer the second time).
  const latest = await kv.get<number>(keys.log(d, view).latest);
  const { items } = await listItems(kv, d, { ...view, limit });
  return { seq: latest.value ?? 0, versionstamp: latest.versionstamp ?? "", items };
}

function entityOf(entry: Deno.KvEntry<object>, unique: boolean): Entity<object> {
  if (unique) {
    const { id, value } = entry.value as { id: string; value: object };
    return { id, value, versionstamp: entry.versionstamp };
  }
  return { id: entry.key.at(-1) as string, value: entry.value, versionstamp: entry.versionstamp };
}

function names(d: Declared): string {
  return [...d.indexes.keys()].join(", ") || "none";
}

/**
 * The keys of a listing, or of its index values that start with `startsWith`: from the prefix
 * itself to the first text that does not start with it - its last code point but one more
 * (`"smi"` to `"smj"`), at most a byte longer, so the range's keys fit KV's reads wherever the
 * prefix's own keys fit its writes. A prefix of U+10FFFF alone, or none, has no such text: all the
 * strings up to one with U+10FFFF after it (a noncharacter) then.
 */
function selectorOf(prefix: Deno.KvKey, startsWith: string | undefined): Deno.KvListSelector {
  if (startsWith === undefined) return { prefix };
  return { start: [...prefix, startsWith], end: [...prefix, textAfter(startsWith)] };
}

/** The least text greater than every text starting with `text` (KV orders text by code point). */
function textAfter(text: string): string {
  const points = [...text].map((point) => point.codePointAt(0)!);
  while (points.length > 0) {
    const last = points.pop()!;
    if (last < 0x10ffff) {
      return String.fromCodePoint(...points, last === 0xd7ff ? 0xe000 : last + 1);
    }
  }
  return `${text}\u{10FFFF}`;
}

/**
 * A short hash (FNV-1a) of the listing a cursor belongs to: its prefix, value prefix and direction.
 */
function tagOf(prefix: Deno.KvKey, reverse: boolean, startsWith: string | undefined): string {
  let hash = 0x811c9dc5;
  const text = JSON.stringify(
    [prefix, startsWith ?? null],
    (_, part) =>
      typeof part === "bigint" ? `${part}n` : part instanceof Uint8Array ? [...part] : part,
  ) +
    (reverse ? "<" : ">");
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(36);
}

const CURSOR = /^([0-9a-z]{1,7})\.([A-Za-z0-9_-]{1,2800}={0,2})$/;

function kvCursor(cursor: string, tag: string): string {
  const match = CURSOR.exec(cursor);
  if (!match) throw badCursor();
  if (match[1] !== tag) throw httpError(400, "This cursor belongs to another listing.");
  return match[2];
}

function badCursor() {
  return httpError(400, "Not a cursor of this listing.");
}
