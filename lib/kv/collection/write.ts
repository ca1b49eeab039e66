/**
 * @module
 * A collection's writes - create, update, delete - each one atomic commit that holds the item, its
 * index entries and its change events, guarded by `check`s on everything it read: the item's
 * versionstamp, the unique values it takes, the change logs' counters. So the indexes always agree
 * with the items (there is no moment, and no failure, between two writes), and every change is
 * numbered in its logs with no gap. A commit that loses a race is read and decided again (the
 * function given to `update` runs again on the item as it now is), a bounded number of times;
 * within an isolate a collection's writes go one at a time (they would only race each other for
 * the log's counter). What the schema, the state machine or KV's limits refuse is thrown before
 * anything is written.
 */
import { isDeepStrictEqual } from "node:util";
import { httpError } from "../../shared/http_error.ts";
import type { Entity } from "../../shared/live_view.ts";
import { type Commit, inTurn, retrying } from "../commit.ts";
import { KvLimitError, valueSize } from "../limits.ts";
import { MeasuredAtomic } from "../measured_atomic.ts";
import {
  type Declared,
  hasHalfCharacter,
  keys,
  sameValue,
  type StoredChange,
  type View,
} from "./declared.ts";
import { checkFailed } from "./checks.ts";
import { ConflictError, TransitionError, ValidationError } from "./errors.ts";
import { validate } from "./schema.ts";
import { isId, newId } from "./ids.ts";

/**
 * What an update changes: some fields, or a function of the item as it is that returns them (run
 * again on the item as it then is, if another write wins the race: a read-modify-write).
 *
 * @example
 * ```ts
 * import type { Patch } from "shell/data";
 *
 * type Counter = { label: string; count: number };
 * const rename: Patch<Counter> = { label: "Visits" };
 * const increment: Patch<Counter> = (counter) => ({ count: counter.count + 1 });
 * ```
 * @see docs/data.md - Conflicts
 */
export type Patch<T> = Partial<T> | ((current: T) => Partial<T> | Promise<Partial<T>>);

/**
 * A write that holds only while other items are as they were read: a count entered while its stock
 * take is still counting, a comment while its issue is open; or while no item of another collection
 * has a value: a reservation while no loan is open for the book. The write's commit checks each
 * (`Deno.AtomicCheck`s, made by the other collection: `takes.check(take)`,
 * `loans.checkAbsent("openByBook", book)`), so a submit or a loan that commits first, in any worker
 * or instance, makes the write a `ConflictError` (409, `"checked"` or `"exists"`, naming the other
 * collection) with nothing written; read the other item again to say why.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { collection } from "shell/data";
 *
 * const takes = collection("takes", {
 *   schema: v.object({ state: v.picklist(["counting", "submitted"]) }),
 * });
 * const counts = collection("counts", { schema: v.object({ take: v.string(), n: v.number() }) });
 *
 * const kv = await Deno.openKv(":memory:");
 * const take = await takes.create(kv, { state: "counting" });
 * await counts.create(kv, { take: take.id, n: 3 }, { checks: [takes.check(take)] });
 * ```
 * @see docs/data.md - Rules across items and time
 */
export interface CreateOptions {
  /**
   * Other items, as read, or their absence: the write commits only while each check holds.
   */
  checks?: readonly Deno.AtomicCheck[];
  /**
   * More of the product's own for the write's commit, given the item's id: a job
   * (`(atomic, id) => jobs.add(atomic, "remind", { id }, { key: id })`), so that the item and its
   * job happen both or neither. Called again on each try of a write that lost a race, and not at
   * all when an update changes nothing. A check it adds that fails fails every try (a
   * `KvBusyError`): give a job a key no earlier commit took, such as the new item's id. An async
   * one is awaited before the commit; its rejection is the write's (nothing committed). It gets
   * the write's own atomic operation: it adds keys of the product's. One under the collection's
   * name (its items, indexes and change logs, which the write sets and checks itself) is a
   * `TypeError` naming the key, with nothing committed. What it adds counts toward KV's limits on
   * one commit: beyond them the write throws a `KvLimitError`.
   */
  also?: (atomic: Deno.AtomicOperation, id: string) => unknown;
}

/**
 * A write that must not overwrite a newer one: the versionstamp the item was read at (and, as for
 * `create`, other items it holds only with: `checks`).
 *
 * @example
 * ```ts
 * import type { WriteOptions } from "shell/data";
 *
 * const onlyIfUnchanged: WriteOptions = { versionstamp: "00000000000000120000" };
 * ```
 * @see docs/data.md - Conflicts
 */
export interface WriteOptions extends CreateOptions {
  /** The item's versionstamp when it was read: another one now is a `ConflictError` (409). */
  versionstamp?: string;
}

/** What `decide` answers to leave the item as it is: nothing written. */
export const KEEP = Symbol("keep");
type Decision = object | null | typeof KEEP;

/**
 * A write's own options: `skip` names unique indexes the commit leaves alone (a reindex's item
 * whose value there another item holds: its other entries are still written).
 */
interface Staging extends CreateOptions {
  skip?: ReadonlySet<string>;
}

export async function createItem(
  kv: Deno.Kv,
  d: Declared,
  input: unknown,
  { checks = [], also }: CreateOptions = {},
): Promise<Entity<object>> {
  const value = await validate(d.name, d.schema, input);
  const { entity } = await write(kv, d, newId(), "create", { checks, also }, (current) => {
    if (current.value !== null) throw new Error(`${d.name}: the new id exists already`);
    return value;
  });
  return entity!;
}

export async function updateItem(
  kv: Deno.Kv,
  d: Declared,
  id: string,
  patch: Patch<object>,
  { versionstamp, checks = [], also }: WriteOptions = {},
): Promise<Entity<object>> {
  if (!isId(id)) throw gone(d);
  const { entity } = await write(kv, d, id, "update", { checks, also }, async (current) => {
    if (current.value === null) throw gone(d);
    if (versionstamp !== undefined && current.versionstamp !== versionstamp) {
      throw new ConflictError(d.name, "changed");
    }
    const fields = typeof patch === "function" ? await patch(current.value) : patch;
    const next = await validate(d.name, d.schema, { ...current.value, ...fields });
    assertTransitions(d, current.value, next);
    return isDeepStrictEqual(next, current.value) ? KEEP : next;
  });
  return entity!;
}

export async function deleteItem(
  kv: Deno.Kv,
  d: Declared,
  id: string,
  { versionstamp, checks = [], also }: WriteOptions = {},
): Promise<string | null> {
  if (!isId(id)) return null;
  const { written } = await write(kv, d, id, "delete", { checks, also }, (current) => {
    if (current.value === null) return KEEP;
    if (versionstamp !== undefined && current.versionstamp !== versionstamp) {
      throw new ConflictError(d.name, "changed");
    }
    return null;
  });
  return written ?? null;
}

function gone(d: Declared) {
  return httpError(404, `No such item in ${d.name}: it may have been deleted.`, { code: "gone" });
}

function assertTransitions(d: Declared, from: object, to: object): void {
  for (const [field, machine] of d.transitions) {
    const was = (from as Record<string, unknown>)[field];
    const is = (to as Record<string, unknown>)[field];
    // A field set for the first time starts the machine wherever the schema lets it.
    if (was === is || was === undefined) continue;
    if (!machine.get(String(was))?.has(String(is))) {
      throw new TransitionError(d.name, field, was, is);
    }
  }
}

/**
 * Reads the item, lets `decide` say what it becomes (an item, `null` to delete it, `KEEP` to
 * leave it), and commits that, checking `checks` too; again from the read when the commit lost a
 * race, where a check that no longer holds ends the write (its item changed: no retry can pass).
 */
export function write(
  kv: Deno.Kv,
  d: Declared,
  id: string,
  what: string,
  { checks = [], also, skip }: Staging,
  decide: (current: Deno.KvEntryMaybe<object>) => Decision | Promise<Decision>,
): Promise<{ entity: Entity<object> | null; written?: string }> {
  return inTurn(kv, d, () =>
    retrying(`${d.name}: ${what}`, async (commit) => {
      const [current, ...others] = await getAll(kv, [
        keys.item(d, id),
        ...checks.map(({ key }) => key),
      ]) as Deno.KvEntryMaybe<object>[];
      const failed = checks.find((check, i) =>
        others[i].versionstamp !== check.versionstamp && !heldByItself(d, id, check, others[i])
      );
      if (failed) throw checkFailed(d.name, failed);
      const next = await decide(current);
      if (next === KEEP) {
        const { value, versionstamp } = current;
        return { entity: value === null ? null : { id, value, versionstamp: versionstamp! } };
      }
      const result = await commitChange(kv, d, id, [current, ...others], next, commit, also, skip);
      if (!result.ok) return undefined;
      const { versionstamp } = result;
      return { entity: next && { id, value: next, versionstamp }, written: versionstamp };
    }));
}

/**
 * Whether a `checkAbsent` of `d`'s own unique value finds it held by the item written: no other
 * item has it, and a write (keeping it, moving off it, deleting its holder) does not conflict with
 * itself: refused, it could never pass, however often the user reloaded and tried again. The
 * commit still checks the entry as read, so a write that takes the value meanwhile still wins.
 */
function heldByItself(
  d: Declared,
  id: string,
  check: Deno.AtomicCheck,
  entry: Deno.KvEntryMaybe<object>,
): boolean {
  const [collection, kind] = entry.key;
  return check.versionstamp === null && collection === d.name && kind === "unique" &&
    (entry.value as { id?: unknown } | null)?.id === id;
}

/** A change, and the view whose log it goes to. */
interface Logged {
  view: View;
  change: StoredChange;
}

/**
 * Commits `current` becoming `next` (`null`: deleted): the item, its index entries, and its change
 * in the log of every view it is in, was in, or enters - checked against what the write read (the
 * item, and the other items it holds only with).
 */
async function commitChange(
  kv: Deno.Kv,
  d: Declared,
  id: string,
  [current, ...others]: Deno.KvEntryMaybe<object>[],
  next: object | null,
  commit: Commit,
  also: CreateOptions["also"],
  skip?: ReadonlySet<string>,
): Promise<Deno.KvCommitResult | Deno.KvCommitError> {
  const atomic = new MeasuredAtomic(kv).check(current);
  for (const other of others) atomic.check(other);
  try {
    const { logs, claims, releases } = stageItem(atomic, d, id, current.value, next, skip);
    const logKeys = logs.map(({ view }) => keys.log(d, view));
    const read = await getAll(kv, [...logKeys.map((log) => log.latest), ...claims, ...releases]);
    const holderOf = (entry: Deno.KvEntryMaybe<unknown>) =>
      (entry.value as { id: string } | null)?.id;
    for (const claim of read.slice(logs.length, logs.length + claims.length)) {
      const holder = holderOf(claim);
      if (holder !== undefined && holder !== id) {
        throw new ConflictError(d.name, "taken", String(claim.key[2]));
      }
      atomic.check(claim);
    }
    for (const release of read.slice(logs.length + claims.length)) {
      if (holderOf(release) === id) atomic.check(release).delete(release.key);
    }
    logs.forEach(({ change }, i) => {
      const counter = read[i] as Deno.KvEntryMaybe<number>;
      const seq = (counter.value ?? 0) + 1;
      atomic.check(counter);
      atomic.set([...logKeys[i].events, seq], change, { expireIn: d.retainMs });
      atomic.set(logKeys[i].latest, seq);
    });
    atomic.assertFits();
  } catch (error) {
    if (!(error instanceof KvLimitError)) throw error;
    throw new ValidationError(d.name, [], [`Too large to store: ${error.message}.`], error);
  }
  // An async one's later additions, or its rejection, are the write's. Only a promise is awaited:
  // `jobs.add` answers the AtomicOperation, whose `then` throws ("did you forget to call commit()").
  // Measured with the rest: too much added is a `KvLimitError`, not KV's bare `TypeError`.
  const added = also?.(atomic.measuring(outside(d)), id);
  if (added instanceof Promise) await added;
  if (also) atomic.assertFits();
  return await commit(atomic.op);
}

/**
 * The guard of what `also` adds: none of it under the collection's name. An item, an index entry
 * or a log counter set or deleted there would leave the indexes or the change logs disagreeing
 * with the items, with nothing to tell; a check there is `checks`' (`collection.check(item)`).
 */
function outside(d: Declared): (key: Deno.KvKey) => void {
  return (key) => {
    if (key[0] !== d.name) return;
    throw new TypeError(
      `${d.name}: also may not touch the collection's own keys (${Deno.inspect(key)}): ` +
        "the write keeps its items, indexes and change logs itself",
    );
  };
}

/**
 * Stages the item and its index entries; returns the changes to log, by view, the unique values
 * the write takes (each must be free, or the item's own) and those it leaves (deleted if the
 * item's own). Both are read, not assumed: an index given a `normalize` (or another `key`) after
 * items were stored finds an item's value where another item's entry is - an update that kept it
 * wrote over that entry, and a delete removed it, so a third item could take the value.
 */
function stageItem(
  atomic: MeasuredAtomic,
  d: Declared,
  id: string,
  before: object | null,
  next: object | null,
  skip?: ReadonlySet<string>,
): { logs: Logged[]; claims: Deno.KvKey[]; releases: Deno.KvKey[] } {
  const bytes = next && valueSize(next);
  if (next) atomic.set(keys.item(d, id), next, undefined, bytes!);
  else atomic.delete(keys.item(d, id));
  const op = before === null ? "create" : next === null ? "delete" : "update";
  const logs: Logged[] = [{ view: {}, change: next ? { op, id, value: next } : { op, id } }];
  const claims: Deno.KvKey[] = [];
  const releases: Deno.KvKey[] = [];
  for (const index of d.indexes.values()) {
    if (skip?.has(index.name)) continue;
    const was = before ? index.valueOf(before) : undefined;
    const is = next ? index.valueOf(next) : undefined;
    if (hasHalfCharacter(is)) {
      // Its key would be another value's (KV keeps the half as U+FFFD): taken, or found, as that.
      throw new ValidationError(d.name, [], [`${index.name}: text with half a character.`]);
    }
    const same = sameValue(was, is);
    if (index.unique) {
      if (was !== undefined && !same) releases.push(keys.unique(d, index.name, was));
      if (is !== undefined) {
        claims.push(keys.unique(d, index.name, is));
        atomic.set(keys.unique(d, index.name, is), { id, value: next });
      }
      continue;
    }
    if (was !== undefined && !same) atomic.delete(keys.index(d, index.name, was, id));
    if (is !== undefined) atomic.set(keys.index(d, index.name, is, id), next, undefined, bytes!);
    logs.push(...moves(index.name, was, is, same, id, next));
  }
  return { logs, claims, releases };
}

/** How a change looks from the views of one index: the item stayed, left one, entered another. */
function moves(
  index: string,
  was: Deno.KvKeyPart | undefined,
  is: Deno.KvKeyPart | undefined,
  same: boolean,
  id: string,
  next: object | null,
): Logged[] {
  if (same) {
    return is === undefined
      ? []
      : [{ view: { index, value: is }, change: { op: "update", id, value: next! } }];
  }
  const logged: Logged[] = [];
  if (was !== undefined) logged.push({ view: { index, value: was }, change: { op: "delete", id } });
  if (is !== undefined) {
    logged.push({ view: { index, value: is }, change: { op: "create", id, value: next! } });
  }
  return logged;
}

/** The entries of `keys`, read ten at a time (KV's limit for one `getMany`). */
export async function getAll(
  kv: Deno.Kv,
  all: Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<unknown>[]> {
  const batches: Promise<Deno.KvEntryMaybe<unknown>[]>[] = [];
  for (let i = 0; i < all.length; i += 10) batches.push(kv.getMany(all.slice(i, i + 10)));
  return (await Promise.all(batches)).flat();
}
