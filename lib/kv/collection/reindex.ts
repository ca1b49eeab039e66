/**
 * @module
 * `collection.reindex(kv)`: a collection's index entries made again as its declaration now spells
 * them - after an index was added, given a `normalize` or another `key`, made unique or not, or
 * dropped. Four walks, each in bounded batches with KV's own cursor, saved in the store after
 * every batch so that a run stopped half-way (a signal, a killed process) goes on from there: the
 * unique entries, then the other index entries, each deleted when its item no longer has that
 * value (or is gone, or the index is); then the items, each one whose entries are not all there,
 * from its own commit, written again with all of them; then the change logs of indexes dropped.
 * Every change is one item's atomic commit, checked against what it read: a write of another
 * worker that lands first wins, and the item is then looked at again as it is (it has its entries
 * already: that write made them). An item's unique value that another item holds is a collision,
 * reported with both ids; the item keeps its other entries, and neither item is dropped. The
 * report keeps the first `REPORT_LIMIT` collisions and refusals and counts them all: a run over a
 * million items that all collide holds a hundred, not a million.
 */
import { createHash } from "node:crypto";
import { inTurn, retrying } from "../commit.ts";
import { MeasuredAtomic } from "../measured_atomic.ts";
import { keySize, MAX_KEY_BYTES } from "../limits.ts";
import { type Declared, keys, type ResolvedIndex, sameValue } from "./declared.ts";
import { ConflictError, ValidationError } from "./errors.ts";
import { commitWrites, getAll, KEEP } from "./write.ts";

/** How many collisions, and how many refused items, a report lists (it counts every one). */
export const REPORT_LIMIT = 100;

/**
 * How `reindex` runs.
 *
 * @example
 * ```ts
 * import type { ReindexOptions } from "shell/data";
 *
 * const options: ReindexOptions = {
 *   batch: 200,
 *   signal: AbortSignal.timeout(60_000), // the next run goes on from where this one stopped
 *   progress: (report) => console.log(`${report.items} items read`),
 * };
 * ```
 * @see docs/data.md - Evolving a collection
 */
export interface ReindexOptions {
  /**
   * Ends the run between two items, with the signal's reason: the next run goes on after the
   * last batch done.
   */
  signal?: AbortSignal;
  /** Items, or index entries, read at once: 1 to 1,000 (default 100). */
  batch?: number;
  /**
   * Called after each batch with the counts so far (a command's progress), and once more when the
   * signal stops the run, with what it did up to the item in hand.
   */
  progress?: (report: ReindexReport) => void;
}

/**
 * A unique index value two items have: `ids[0]` holds the entry, `ids[1]` has no entry in that
 * index until one of them changes its value.
 *
 * @example
 * ```ts
 * import type { Collision } from "shell/data";
 *
 * const say = ({ index, value, ids: [holder, other] }: Collision) =>
 *   `${other} has ${index} ${String(value)}, which ${holder} holds: change one of them`;
 * ```
 * @see docs/data.md - Evolving a collection
 */
export interface Collision {
  /** The unique index. */
  index: string;
  /** The value both items have in it, as the index keeps it. */
  value: Deno.KvKeyPart;
  /** The item that holds the entry, then the other. */
  ids: [string, string];
}

/**
 * What a `reindex` run did, counted by this run alone (a resumed one starts after the batches an
 * earlier run did).
 *
 * @example
 * ```ts
 * import type { ReindexReport } from "shell/data";
 *
 * const done = (report: ReindexReport) =>
 *   `${report.rewritten} of ${report.items} items indexed again, ${report.removed} stale entries ` +
 *   `removed, ${report.collisionCount} collisions`;
 * ```
 * @see docs/data.md - Evolving a collection
 */
export interface ReindexReport {
  /** Whether the run went on from an earlier one's saved place. */
  resumed: boolean;
  /** Items read. */
  items: number;
  /** Items written again with all their entries (and their change logged, see docs/data.md). */
  rewritten: number;
  /** Stale index entries deleted. */
  removed: number;
  /**
   * Unique values two items have (each pair once per run): the first 100 (`REPORT_LIMIT`) found,
   * so that a run where every item collides does not hold them all; `collisionCount` counts them.
   */
  collisions: Collision[];
  /**
   * How many collisions the run found, listed or not; a run that went on from a stopped one counts
   * that one's too (which it does not list).
   */
  collisionCount: number;
  /**
   * Items too large to store with all their entries (an index added to big items), and items an
   * index's `key` throws on (its message, after the index's name): each left as it was. The first
   * 100 (`REPORT_LIMIT`); `refusedCount` counts them.
   */
  refused: { id: string; message: string }[];
  /** How many items were refused, listed or not (a stopped run's too, as `collisionCount`). */
  refusedCount: number;
}

/** Counts a collision, and lists it while the report lists fewer than `REPORT_LIMIT`. */
function addCollision(report: ReindexReport, collision: Collision): void {
  if (report.collisionCount++ < REPORT_LIMIT) report.collisions.push(collision);
}

/** Counts a refused item, and lists it while the report lists fewer than `REPORT_LIMIT`. */
function addRefused(report: ReindexReport, refused: { id: string; message: string }): void {
  if (report.refusedCount++ < REPORT_LIMIT) report.refused.push(refused);
}

/** What a walk does with one entry under its prefix. */
type Visit = (
  kv: Deno.Kv,
  d: Declared,
  entry: Deno.KvEntry<unknown>,
  report: ReindexReport,
) => Promise<void>;

/**
 * The walks, in order: the stale entries go first, so an item's value is free when it claims it;
 * then the items; then the change logs of indexes no longer declared (or unique now), which
 * nothing would write or read again.
 */
const WALKS: readonly { prefix: string; visit: Visit }[] = [
  { prefix: "unique", visit: removeIfStale },
  { prefix: "index", visit: removeIfStale },
  { prefix: "items", visit: indexItem },
  { prefix: "logs", visit: dropIfUndeclared },
];

/**
 * Where a stopped run was: the walk, KV's cursor after its last batch, its declaration, and what it
 * had found, so that the run going on from it reports (and exits with) all of it.
 */
interface Place {
  walk: number;
  cursor: string;
  declared: string;
  /** Absent from a place saved by an earlier build's run. */
  collisionCount?: number;
  refusedCount?: number;
}

/**
 * The indexes as the declaration spells them, hashed: a run stopped under another declaration is
 * not gone on from, since what its walks left behind (stale entries of the new spelling, items
 * given the old one's) is not known to the new one's. A change in what a key reads besides the
 * item (a map it closes over) is not seen here.
 */
function declarationOf(d: Declared): string {
  const indexes = [...d.indexes.values()].map(({ name, unique, spelling }) => [
    name,
    unique,
    spelling,
  ]);
  return createHash("sha256").update(JSON.stringify(indexes.sort())).digest("base64url");
}

export async function reindex(
  kv: Deno.Kv,
  d: Declared,
  { signal, batch = 100, progress }: ReindexOptions = {},
): Promise<ReindexReport> {
  if (!Number.isInteger(batch) || batch < 1 || batch > 1_000) {
    throw new RangeError(`${d.name}: reindex batch must be 1 to 1,000, not ${batch}`);
  }
  const declared = declarationOf(d);
  const stored = (await kv.get<Place>(keys.reindex(d))).value;
  const saved = stored?.declared === declared ? stored : null;
  const report: ReindexReport = {
    resumed: saved !== null,
    items: 0,
    rewritten: 0,
    removed: 0,
    collisions: [],
    collisionCount: saved?.collisionCount ?? 0,
    refused: [],
    refusedCount: saved?.refusedCount ?? 0,
  };
  try {
    for (let walk = saved?.walk ?? 0; walk < WALKS.length; walk++) {
      let cursor = walk === saved?.walk ? saved.cursor : undefined;
      for (let more = true; more;) {
        signal?.throwIfAborted();
        const { prefix, visit } = WALKS[walk];
        const listed = kv.list<unknown>({ prefix: [d.name, prefix] }, { limit: batch, cursor });
        const entries = await Array.fromAsync(listed);
        if (entries.length === 0) break;
        for (const entry of entries) {
          signal?.throwIfAborted();
          await visit(kv, d, entry, report);
        }
        cursor = listed.cursor;
        more = entries.length === batch;
        const { collisionCount, refusedCount } = report;
        const place: Place = { walk, cursor, declared, collisionCount, refusedCount };
        await kv.set(keys.reindex(d), place);
        progress?.(report);
      }
    }
  } catch (error) {
    // Stopped: the caller (the task's Ctrl-C) can say how far the run got.
    if (signal?.aborted) progress?.(report);
    throw error;
  }
  await kv.delete(keys.reindex(d));
  return report;
}

/**
 * Whether an index entry is no longer its item's: its index is not declared (or not of its kind
 * any more), its item is gone, or the item's value in the index is another now.
 */
function isStale(
  d: Declared,
  { key }: Deno.KvEntry<unknown>,
  item: Deno.KvEntryMaybe<unknown>,
): boolean {
  const [, kind, name, value] = key;
  const index = d.indexes.get(name as string);
  if (!index || index.unique !== (kind === "unique") || item.value === null) return true;
  let is: Deno.KvKeyPart | undefined;
  try {
    is = index.valueOf(item.value as object);
  } catch {
    // Its `key` throws on this item: not known to be stale, so kept; the items' walk reports the
    // item in `refused`, with the error, and a run after the key is mended settles the entry.
    return false;
  }
  return !sameValue(is, value as Deno.KvKeyPart);
}

/**
 * The item's value in `index`; a `ValidationError` naming the index when its `key` (or
 * `normalize`) throws on the item - one stored before the key changed, of a shape it no longer
 * expects - so that the item is reported in `refused` and the run goes on: the bare error stopped
 * every run at that item, with no id to find it by.
 */
function valueIn(d: Declared, index: ResolvedIndex, item: object): Deno.KvKeyPart | undefined {
  try {
    return index.valueOf(item);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ValidationError(d.name, [], [`index ${index.name}: ${why}`], error);
  }
}

/** The item an index entry is of: a unique entry names it, another one ends with its id. */
function itemOf({ key, value }: Deno.KvEntry<unknown>): string | undefined {
  const id = key[1] === "unique" ? (value as { id?: unknown } | null)?.id : key[4];
  return typeof id === "string" ? id : undefined;
}

/**
 * Deletes the entry if it is stale, checked against the entry and its item as read; a view of a
 * non-unique index's value sees the item leave (a `delete` in its log), as it would on an update.
 */
async function removeIfStale(
  kv: Deno.Kv,
  d: Declared,
  listed: Deno.KvEntry<unknown>,
  report: ReindexReport,
): Promise<void> {
  if (await removedIfStale(kv, d, listed)) report.removed++;
}

function removedIfStale(kv: Deno.Kv, d: Declared, listed: Deno.KvEntry<unknown>): Promise<boolean> {
  return inTurn(kv, d, () =>
    retrying(`${d.name}: reindex`, async (commit) => {
      const entry = await kv.get<unknown>(listed.key);
      if (entry.versionstamp === null) return false;
      const id = itemOf(entry);
      const item = id === undefined
        ? { key: [], value: null, versionstamp: null }
        : await kv.get<unknown>(keys.item(d, id));
      if (!isStale(d, entry, item)) return false;
      const atomic = new MeasuredAtomic(kv).check(entry).delete(entry.key);
      if (id !== undefined) atomic.check(item);
      const [, kind, index, value] = entry.key as [string, string, string, Deno.KvKeyPart];
      if (kind === "index" && d.indexes.get(index)?.unique === false) {
        const log = keys.log(d, { index, value });
        const counter = await kv.get<number>(log.latest);
        const seq = (counter.value ?? 0) + 1;
        atomic.check(counter).set(log.latest, seq);
        atomic.set([...log.events, seq], { op: "delete", id }, { expireIn: d.retainMs });
      }
      return (await commit(atomic.op)).ok ? true : undefined;
    }));
}

/** Deletes a change log's entry if its index is no longer a declared non-unique one. */
async function dropIfUndeclared(kv: Deno.Kv, d: Declared, { key }: Deno.KvEntry<unknown>) {
  if (d.indexes.get(key[2] as string)?.unique !== false) await kv.delete(key);
}

/**
 * Writes the item again with every entry its declaration gives it, unless it has them all from
 * its own commit; a unique value another item holds is a collision, and the item is written with
 * its other entries.
 */
async function indexItem(
  kv: Deno.Kv,
  d: Declared,
  { key }: Deno.KvEntry<unknown>,
  report: ReindexReport,
): Promise<void> {
  const id = key[2] as string;
  report.items++;
  const skip = new Set<string>();
  const collide = async (index: string, value: Deno.KvKeyPart) => {
    const held = await kv.get<{ id: string }>(keys.unique(d, index, value));
    const holder = held.value?.id;
    if (holder === undefined || holder === id) return false;
    skip.add(index);
    addCollision(report, { index, value, ids: [holder, id] });
    return true;
  };
  // Each try that ends in a collision leaves one more unique index out: bounded by their number.
  for (let tries = 0; tries <= d.indexes.size + 1; tries++) {
    try {
      const [{ written }] = await commitWrites(kv, [{
        d,
        id,
        what: "reindex",
        skip,
        decide: async (current) => {
          if (current.value === null) return KEEP;
          return await isIndexed(kv, d, id, current, skip, collide) ? KEEP : current.value;
        },
      }]);
      if (written) report.rewritten++;
      return;
    } catch (error) {
      if (error instanceof ValidationError) {
        addRefused(report, { id, message: error.message });
        return;
      }
      // Taken between the read and the commit: by whom, read again; freed meanwhile, tried again.
      if (!(error instanceof ConflictError && error.reason === "taken" && error.index)) throw error;
      const item = await kv.get<object>(keys.item(d, id));
      const value = item.value && d.indexes.get(error.index)!.valueOf(item.value);
      if (value !== null && value !== undefined) await collide(error.index, value);
    }
  }
  throw new Error(`${d.name}: reindex of ${id} kept conflicting`);
}

/**
 * Whether `current` has every entry of its indexes from its own commit (same versionstamp): a
 * unique value held by another item is a collision, and that index left out.
 */
async function isIndexed(
  kv: Deno.Kv,
  d: Declared,
  id: string,
  current: Deno.KvEntryMaybe<object>,
  skip: Set<string>,
  collide: (index: string, value: Deno.KvKeyPart) => Promise<boolean>,
): Promise<boolean> {
  const wanted: { index: string; unique: boolean; value: Deno.KvKeyPart; key: Deno.KvKey }[] = [];
  for (const index of d.indexes.values()) {
    if (skip.has(index.name)) continue;
    const value = valueIn(d, index, current.value!);
    if (value === undefined) continue;
    const key = index.unique
      ? keys.unique(d, index.name, value)
      : keys.index(d, index.name, value, id);
    // Read below, a key too large was KV's bare TypeError, which stopped every run at this item.
    const bytes = keySize(key);
    if (bytes > MAX_KEY_BYTES) {
      const why = `KV key too large: ${bytes} bytes encoded (max ${MAX_KEY_BYTES})`;
      throw new ValidationError(d.name, [], [`index ${index.name}: ${why}`]);
    }
    wanted.push({ index: index.name, unique: index.unique, value, key });
  }
  const entries = await getAll(kv, wanted.map(({ key }) => key));
  let indexed = true;
  for (const [i, { index, unique, value }] of wanted.entries()) {
    const entry = entries[i];
    const holder = (entry.value as { id?: string } | null)?.id;
    if (unique && holder !== undefined && holder !== id && await collide(index, value)) continue;
    if (entry.versionstamp !== current.versionstamp) indexed = false;
  }
  return indexed;
}
