/**
 * @module
 * An append-only log in Deno KV: items under `[...prefix, "items", id]` with ids 1, 2, 3, ... in
 * commit order, never clock order. Each append reads the counter `[...prefix, "latest"]` and
 * commits the item and the bumped counter together, guarded by `check`s: of two appends that race
 * (two workers, two Deno Deploy isolates) only one can take an id, and the other retries with the
 * next. So ids have no gaps, "the items after id N" is a complete answer - what a live feed and a
 * reconnecting page rely on - and the newest items are one reverse range query. The counter is
 * also the one key a watcher needs: it changes once per append.
 */
import { type Commit, inTurn, retrying } from "./commit.ts";
import { keyName } from "./key_name.ts";
import { checkKey, nameOf } from "./key_too_long.ts";
import { assertFits } from "./limits.ts";

/**
 * An append-only log in Deno KV, as `kvLog(prefix)` names it: where its items and its counter
 * live. Pass it to `append`, `newest`, `after` and `feedOf`.
 *
 * @example
 * ```ts
 * import { type KvLog, kvLog } from "shell/data";
 *
 * interface Note {
 *   id: number;
 *   text: string;
 * }
 * export const NOTES: KvLog<Note> = kvLog<Note>(["notes"]);
 * ```
 * @see docs/data.md - Ordered data: a log
 */
export interface KvLog<T extends Logged> {
  /** The items: `[...prefix, "items", id]`. */
  readonly items: Deno.KvKey;
  /** The newest id (a number), bumped by every append. */
  readonly latest: Deno.KvKey;
  /** Never set: it carries the items' type, so that reading a log returns them typed. */
  readonly _item?: T;
}

/**
 * What a log holds: anything with the id the log gave it.
 *
 * @example
 * ```ts
 * import type { Logged } from "shell/data";
 *
 * export interface Entry extends Logged {
 *   name: string;
 *   message: string;
 * }
 * ```
 * @see docs/data.md - Ordered data: a log
 */
export interface Logged {
  /** 1, 2, 3, ... in commit order: no gaps, never a clock's order. */
  id: number;
}

/**
 * An append-only log under `prefix`: items under `[...prefix, "items", id]` with ids 1, 2, 3, ...
 * in commit order (two workers or Deploy isolates never take the same id, and ids have no gaps),
 * and the newest id under `[...prefix, "latest"]`. Makes no KV call: it only names the keys.
 *
 * @param prefix The log's key prefix, e.g. `["guestbook"]`: its name first, then what a request
 * gives, if anything (`["rooms", ctx.params.room]`).
 * @returns The log, for `append`, `newest`, `after` and `feedOf`.
 * @throws {KeyTooLongError} When the parts after its name make the keys too long for KV: a 400
 * (code `too_long`) in a request, as a client's id too long.
 * @throws {TypeError} When the keys are too long for KV with only its name.
 *
 * @example
 * ```ts
 * // routes/_notes/notes.ts
 * import { append, kvLog, newest } from "shell/data";
 *
 * interface Note {
 *   id: number;
 *   text: string;
 * }
 *
 * const NOTES = kvLog<Note>(["notes"]);
 *
 * export const latestNotes = (kv: Deno.Kv) => newest(kv, NOTES, 10);
 * export const saveNote = (kv: Deno.Kv, text: string) => append(kv, NOTES, (id) => ({ id, text }));
 * ```
 * @see docs/data.md - Ordered data: a log
 */
export function kvLog<T extends Logged>(prefix: Deno.KvKey): KvLog<T> {
  // Its name is the product's; what follows may be a request's (`ctx.params.room`).
  checkKey(() => `kvLog([${nameOf(prefix[0])}, ...])`, [...prefix, "items", 0], 1, prefix.length);
  return { items: [...prefix, "items"], latest: [...prefix, "latest"] };
}

const itemKey = (log: KvLog<Logged>, id: number): Deno.KvKey => [...log.items, id];

/**
 * Appends the item `make(id)` builds for the next id, and returns it. Appends to one log within a
 * process run one at a time; across processes, a lost race is retried with the next id.
 *
 * @param kv The store (`kvOf(ctx)`).
 * @param log The log (`kvLog(prefix)`).
 * @param make Builds the item for the id it is given.
 * @returns The item appended.
 * @throws {KvLimitError} When the item is too large for KV (validate input first: this is the
 * backstop).
 * @throws {KvBusyError} When it could not be committed in a bounded number of attempts.
 *
 * @example
 * ```ts
 * import { append, kvLog } from "shell/data";
 *
 * const NOTES = kvLog<{ id: number; text: string }>(["notes"]);
 * const kv = await Deno.openKv(":memory:");
 * const note = await append(kv, NOTES, (id) => ({ id, text: "first" }));
 * console.log(note.id); // 1
 * ```
 * @see docs/data.md - Ordered data: a log
 */
export function append<T extends Logged>(
  kv: Deno.Kv,
  log: KvLog<T>,
  make: (id: number) => T,
): Promise<T> {
  // Every append races for the same counter: run together, fifty of them would mostly fail their
  // `check` and retry until some give up. One at a time per isolate, only other workers race -
  // queued by the log's keys, not the object: a log named per request is a new object each time.
  return inTurn(kv, keyName(log.latest), () => appendNow(kv, log, make));
}

function appendNow<T extends Logged>(
  kv: Deno.Kv,
  log: KvLog<T>,
  make: (id: number) => T,
): Promise<T> {
  return retrying("KV log append", async (commit: Commit) => {
    const latest = await kv.get<number>(log.latest);
    const id = (latest.value ?? await newestId(kv, log)) + 1;
    const item = make(id);
    const key = itemKey(log, id);
    assertFits(key, item);
    const result = await commit(
      kv.atomic()
        .check(latest)
        .check({ key, versionstamp: null })
        .set(key, item)
        .set(log.latest, id),
    );
    return result.ok ? item : undefined;
  });
}

/**
 * The newest `n` items, newest first: one reverse range query.
 *
 * @param kv The store.
 * @param log The log.
 * @param n How many, at most.
 * @returns The items, newest first.
 *
 * @example
 * ```ts
 * import { kvLog, newest } from "shell/data";
 *
 * const NOTES = kvLog<{ id: number; text: string }>(["notes"]);
 * const kv = await Deno.openKv(":memory:");
 * const latest = await newest(kv, NOTES, 10);
 * ```
 * @see docs/data.md - Ordered data: a log
 */
export async function newest<T extends Logged>(
  kv: Deno.Kv,
  log: KvLog<T>,
  n: number,
): Promise<T[]> {
  const found: T[] = [];
  for await (const entry of kv.list<T>({ prefix: log.items }, { reverse: true, limit: n })) {
    found.push(entry.value);
  }
  return found;
}

/**
 * Up to `limit` items after id `cursor` - the newest of them when there are more - oldest first:
 * what a page that has items up to `cursor` missed.
 *
 * @param kv The store.
 * @param log The log.
 * @param cursor The last id the reader has (0 for none).
 * @param limit How many, at most.
 * @returns The items after `cursor`, oldest first.
 *
 * @example
 * ```ts
 * import { after, kvLog } from "shell/data";
 *
 * const NOTES = kvLog<{ id: number; text: string }>(["notes"]);
 * const kv = await Deno.openKv(":memory:");
 * const missed = await after(kv, NOTES, 41, 50); // ids 42, 43, ...
 * ```
 * @see docs/data.md - Ordered data: a log
 */
export async function after<T extends Logged>(
  kv: Deno.Kv,
  log: KvLog<T>,
  cursor: number,
  limit: number,
): Promise<T[]> {
  const selector = { prefix: log.items, start: itemKey(log, cursor + 1) };
  const newestFirst: T[] = [];
  for await (const entry of kv.list<T>(selector, { reverse: true, limit })) {
    newestFirst.push(entry.value);
  }
  return newestFirst.reverse();
}

/** Only if the counter is missing (never appended to, or deleted by hand): the newest stored id. */
async function newestId(kv: Deno.Kv, log: KvLog<Logged>): Promise<number> {
  const [item] = await newest(kv, log, 1);
  return item?.id ?? 0;
}
