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
 * anything is written. Writes of several items, of one collection or several, commit the same
 * way in one commit (`commitWrites`): each as it would alone, all or none of them.
 */
import { isDeepStrictEqual } from "node:util";
import { httpError } from "../../shared/http_error.ts";
import type { Entity } from "../../shared/live_view.ts";
import { type Commit, inTurns, retrying } from "../commit.ts";
import { keyName } from "../key_name.ts";
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
import { type Skip, skip } from "./skip.ts";

/**
 * What an update changes: some fields, or a function of the item as it is that returns them (run
 * again on the item as it then is, if another write wins the race: a read-modify-write). It gets
 * a copy of the item; what it changes in place is written with what it returns.
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
 * An update's function that may find nothing to do: it returns `skip`, and nothing is written.
 *
 * @example
 * ```ts
 * import { type SkippablePatch, skip } from "shell/data";
 *
 * type Ticket = { level: number };
 * const escalate: SkippablePatch<Ticket> = (t) => t.level >= 2 ? skip : { level: t.level + 1 };
 * ```
 * @see docs/data.md - Nothing to do
 */
export type SkippablePatch<T> = (
  current: T,
) => Partial<T> | Skip | Promise<Partial<T> | Skip>;

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
   * the write's own atomic operation: it adds keys of the product's. One under the name of a
   * collection the commit writes (its items, indexes and change logs, which the write sets and
   * checks itself) is a `TypeError` naming the key, with nothing committed. What it adds counts
   * toward KV's limits on one commit: beyond them the write throws a `KvLimitError`.
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
/** `KEEP`, or `skip` (its function found nothing to do: the result says so). */
type Decision = object | null | typeof KEEP | Skip;

/**
 * One write of a commit: the item, what it holds only with (`checks`) and adds (`also`), the
 * unique indexes it leaves alone (`skip`: a reindex's item whose value there another item holds;
 * its other entries are still written), and `decide`, which says what the item becomes (an item,
 * `null` to delete it, `KEEP` to leave it, `skip` to leave it and say so) - again on each try, on
 * the item as then read.
 */
export interface Planned extends CreateOptions {
  d: Declared;
  id: string;
  what: string;
  skip?: ReadonlySet<string>;
  decide: (current: Deno.KvEntryMaybe<object>) => Decision | Promise<Decision>;
}

/**
 * What a write came to: the item as committed (`null`: none), the commit's versionstamp, and
 * whether its function found nothing to do (`skip`).
 */
export interface Outcome {
  entity: Entity<object> | null;
  written?: string;
  skipped?: boolean;
}

/**
 * How `commitAll` takes a write that skips: alone (the others commit), or with all of them.
 *
 * @example
 * ```ts
 * import type { CommitAllOptions } from "shell/data";
 * const bothOrNeither: CommitAllOptions = { skipAll: true };
 * ```
 * @see docs/data.md - Nothing to do
 */
export interface CommitAllOptions {
  /**
   * A write whose function returns `skip` drops the whole commit: nothing of any write is
   * committed, and `commitAll` resolves with `skip`. Without it, only that write is dropped (the
   * commit still holds only while its item is as read) and its result is `skip`.
   */
  skipAll?: boolean;
}

export function planCreate(
  d: Declared,
  input: unknown,
  { checks, also }: CreateOptions = {},
): Planned {
  let valid: Promise<object> | undefined;
  const id = newId();
  return {
    d,
    id,
    what: "create",
    checks,
    also,
    async decide(current) {
      // The id is new and this write's own: an item there already is this write's, committed
      // before (or by another commit at this moment) - a mistake of the code, not of its user.
      if (current.value !== null) {
        throw new TypeError(
          `${d.name}: this creating(...) write was committed already (item ${id}): a creating ` +
            "write is committed once; describe a new one for another item",
        );
      }
      return await (valid ??= validate(d.name, d.schema, input));
    },
  };
}

export function planUpdate(
  d: Declared,
  id: string,
  patch: Patch<object> | SkippablePatch<object>,
  { versionstamp, checks, also }: WriteOptions = {},
): Planned {
  return {
    d,
    id,
    what: "update",
    checks,
    also,
    async decide(current) {
      if (current.value === null) throw gone(d);
      if (versionstamp !== undefined && current.versionstamp !== versionstamp) {
        throw new ConflictError(d.name, "changed");
      }
      // A function gets a copy, and what it changed in place is written too: the item as read is
      // what the write compares with, moves from and unindexes - changed (`c.tags.push(tag)`), it
      // was taken for no change, skipped its state machine and kept its old index entries.
      const draft = typeof patch === "function" ? structuredClone(current.value) : current.value;
      const fields = typeof patch === "function" ? await patch(draft) : patch;
      if (fields === skip) return skip;
      const next = await validate(d.name, d.schema, { ...draft, ...fields });
      assertTransitions(d, current.value, next);
      return isDeepStrictEqual(next, current.value) ? KEEP : next;
    },
  };
}

export function planDelete(
  d: Declared,
  id: string,
  { versionstamp, checks, also }: WriteOptions = {},
): Planned {
  return {
    d,
    id,
    what: "delete",
    checks,
    also,
    decide(current) {
      if (current.value === null) return KEEP;
      if (versionstamp !== undefined && current.versionstamp !== versionstamp) {
        throw new ConflictError(d.name, "changed");
      }
      return null;
    },
  };
}

export async function createItem(
  kv: Deno.Kv,
  d: Declared,
  input: unknown,
  options?: CreateOptions,
): Promise<Entity<object>> {
  const [{ entity }] = await commitWrites(kv, [planCreate(d, input, options)]);
  return entity!;
}

export async function updateItem(
  kv: Deno.Kv,
  d: Declared,
  id: string,
  patch: Patch<object> | SkippablePatch<object>,
  options?: WriteOptions,
): Promise<Entity<object> | Skip> {
  const [{ entity, skipped }] = await commitWrites(kv, [planUpdate(d, id, patch, options)]);
  return skipped ? skip : entity!;
}

export async function deleteItem(
  kv: Deno.Kv,
  d: Declared,
  id: string,
  options?: WriteOptions,
): Promise<string | null> {
  const [{ written }] = await commitWrites(kv, [planDelete(d, id, options)]);
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
 * Commits `plans` in one atomic commit: reads their items (and what each holds only with), lets
 * each decide what its item becomes, and commits all of that at once; again from the read when the
 * commit lost a race, where a check that no longer holds ends the writes (its item changed: no
 * retry can pass). Resolves with each plan's outcome, in order. Within this isolate it waits for
 * the earlier writes of every collection it writes.
 */
export function commitWrites(
  kv: Deno.Kv,
  plans: readonly Planned[],
  options: CommitAllOptions = {},
): Promise<Outcome[]> {
  const seen = new Set<string>();
  for (const { d, id } of plans) {
    const name = keyName(keys.item(d, id));
    // Two decisions about one item in one commit: the second would overwrite the first unseen.
    if (seen.has(name)) throw new TypeError(`${d.name}: item ${id} is written twice in one commit`);
    seen.add(name);
  }
  const what = [...new Set(plans.map(({ d, what }) => `${d.name}: ${what}`))].join(", ");
  return inTurns(
    kv,
    plans.map(({ d }) => d),
    () => retrying(what, (commit) => attempt(kv, plans, commit, options)),
  );
}

/** A change a plan decided: its item as read, what it becomes, the other items it holds with. */
interface Decided {
  plan: Planned;
  current: Deno.KvEntryMaybe<object>;
  others: Deno.KvEntryMaybe<unknown>[];
  next: object | null;
}

/** One try of `commitWrites`: its outcomes, or `undefined` when the commit lost a race. */
async function attempt(
  kv: Deno.Kv,
  plans: readonly Planned[],
  commit: Commit,
  { skipAll }: CommitAllOptions,
): Promise<Outcome[] | undefined> {
  // A string that is no id names no item, and is not read (it may be too long for a key).
  const readable = (plan: Planned) => isId(plan.id);
  const entries = await getAll(
    kv,
    plans.flatMap((plan) => [
      ...(readable(plan) ? [keys.item(plan.d, plan.id)] : []),
      ...(plan.checks ?? []).map(({ key }) => key),
    ]),
  );
  let at = 0;
  const outcomes: (Outcome | undefined)[] = [];
  const decided: Decided[] = [];
  const kept: Deno.KvEntryMaybe<unknown>[] = [];
  for (const plan of plans) {
    const { d, id, checks = [] } = plan;
    const current = (readable(plan) ? entries[at++] : {
      key: keys.item(d, id),
      value: null,
      versionstamp: null,
    }) as Deno.KvEntryMaybe<object>;
    const others = checks.map(() => entries[at++]);
    const failed = checks.find((check, i) =>
      others[i].versionstamp !== check.versionstamp && !heldByItself(d, id, check, others[i])
    );
    if (failed) throw checkFailed(d.name, failed);
    const next = await plan.decide(current);
    // Nothing to do for this one, and nothing for any when the others rest on it.
    if (next === skip && skipAll) return plans.map(() => ({ entity: null, skipped: true }));
    if (next === KEEP || next === skip) {
      const { value, versionstamp } = current;
      const entity = value === null ? null : { id, value, versionstamp: versionstamp! };
      outcomes.push(next === skip ? { entity, skipped: true } : { entity });
      // What the others write may rest on it (a function that let the item be as it was).
      kept.push(current, ...others);
      continue;
    }
    outcomes.push(undefined); // what it became, once committed
    decided.push({ plan, current, others, next });
  }
  if (decided.length === 0) return outcomes as Outcome[];
  const result = await commitChanges(kv, decided, kept, commit);
  if (!result.ok) return undefined;
  const { versionstamp } = result;
  const written = decided.map(({ plan: { id }, next }): Outcome => ({
    entity: next && { id, value: next, versionstamp },
    written: versionstamp,
  }));
  return outcomes.map((outcome) => outcome ?? written.shift()!);
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
  entry: Deno.KvEntryMaybe<unknown>,
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

/** The changes one log gets in a commit, numbered on from its counter in their order. */
interface LogLine {
  log: { latest: Deno.KvKey; events: Deno.KvKey };
  changes: StoredChange[];
  retainMs: number;
}

/** A unique value a write takes or leaves: its entry's key, and the item. */
interface Held {
  d: Declared;
  id: string;
  key: Deno.KvKey;
}

/**
 * Commits each decided item becoming `next` (`null`: deleted): the item, its index entries, and
 * its change in the log of every view it is in, was in, or enters - checked against what the
 * writes read (the items, the other items they hold only with, and the `kept` items that writes of
 * the commit left as they were). Writes of one collection in one commit number their changes one
 * after the other in the logs they share.
 */
async function commitChanges(
  kv: Deno.Kv,
  decided: Decided[],
  kept: Deno.KvEntryMaybe<unknown>[],
  commit: Commit,
): Promise<Deno.KvCommitResult | Deno.KvCommitError> {
  const atomic = new MeasuredAtomic(kv);
  for (const { current, others } of decided) {
    atomic.check(current);
    for (const other of others) atomic.check(other);
  }
  for (const entry of kept) atomic.check(entry);
  const names = [...new Set(decided.map(({ plan }) => plan.d.name))];
  try {
    const lines = new Map<string, LogLine>();
    const claims: Held[] = [];
    const releases: Held[] = [];
    const claimed = new Set<string>();
    for (const { plan: { d, id, skip }, current, next } of decided) {
      const staged = stageItem(atomic, d, id, current.value, next, skip);
      for (const { view, change } of staged.logs) {
        const log = keys.log(d, view);
        const name = keyName(log.latest);
        if (!lines.has(name)) lines.set(name, { log, changes: [], retainMs: d.retainMs });
        lines.get(name)!.changes.push(change);
      }
      for (const key of staged.claims) {
        // Two items of this commit taking one value: each read it free.
        if (claimed.has(keyName(key))) throw new ConflictError(d.name, "taken", String(key[2]));
        claimed.add(keyName(key));
        claims.push({ d, id, key });
      }
      releases.push(...staged.releases.map((key) => ({ d, id, key })));
    }
    const logs = [...lines.values()];
    const read = await getAll(kv, [
      ...logs.map(({ log }) => log.latest),
      ...[...claims, ...releases].map(({ key }) => key),
    ]);
    const holderOf = (entry: Deno.KvEntryMaybe<unknown>) =>
      (entry.value as { id: string } | null)?.id;
    // A value one item of the commit leaves and another takes (a member's primary address moved)
    // passes to the taker: its entry is set, not deleted.
    const leaving = new Set(releases.map(({ id, key }) => `${id} ${keyName(key)}`));
    claims.forEach(({ d, id, key }, i) => {
      const claim = read[logs.length + i];
      const holder = holderOf(claim);
      if (holder !== undefined && holder !== id && !leaving.has(`${holder} ${keyName(key)}`)) {
        throw new ConflictError(d.name, "taken", String(key[2]));
      }
      atomic.check(claim);
    });
    releases.forEach(({ id, key }, i) => {
      const release = read[logs.length + claims.length + i];
      if (holderOf(release) === id && !claimed.has(keyName(key))) {
        atomic.check(release).delete(key);
      }
    });
    logs.forEach(({ log, changes, retainMs }, i) => {
      const counter = read[i] as Deno.KvEntryMaybe<number>;
      let seq = counter.value ?? 0;
      atomic.check(counter);
      for (const change of changes) {
        atomic.set([...log.events, ++seq], change, { expireIn: retainMs });
      }
      atomic.set(log.latest, seq);
    });
    atomic.assertFits();
  } catch (error) {
    if (!(error instanceof KvLimitError)) throw error;
    throw new ValidationError(
      names.join(", "),
      [],
      [`Too large to store: ${error.message}.`],
      error,
    );
  }
  // An async one's later additions, or its rejection, are the write's. Only a promise is awaited:
  // `jobs.add` answers the AtomicOperation, whose `then` throws ("did you forget to call
  // commit()"). Measured with the rest: too much added is a `KvLimitError`, not KV's bare
  // `TypeError`.
  const adding = decided.filter(({ plan }) => plan.also);
  if (adding.length > 0) {
    const product = atomic.measuring(outside(new Set(names)));
    for (const { plan: { also, id } } of adding) {
      const added = also!(product, id);
      if (added instanceof Promise) await added;
    }
    atomic.assertFits();
  }
  return await commit(atomic.op);
}

/**
 * The guard of what `also` adds: none of it under the name of a collection written. An item, an
 * index entry or a log counter set or deleted there would leave the indexes or the change logs
 * disagreeing with the items, with nothing to tell; a check there is `checks`'
 * (`collection.check(item)`).
 */
function outside(names: ReadonlySet<string>): (key: Deno.KvKey) => void {
  return (key) => {
    if (!names.has(key[0] as string)) return;
    throw new TypeError(
      `${String(key[0])}: also may not touch the collection's own keys (${Deno.inspect(key)}): ` +
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
