/**
 * @module
 * `commitAll(kv, writes)`: writes to several collections (a loan created, its tool moved to
 * `lent`) in one atomic commit, so that both happen or neither, with no moment between them and
 * no crash that leaves one. A write is described by its collection (`loans.creating(loan)`,
 * `tools.updating(id, patch)`, `tools.deleting(id)`) and committed by `commitAll`, each exactly
 * as it would be alone (schema, transitions, unique indexes, versionstamps and `checks`, change
 * logs), and all of them again from the read when the commit lost a race.
 */
import { type Skip, skip } from "./skip.ts";
import { type CommitAllOptions, commitWrites, type Outcome, type Planned } from "./write.ts";

/**
 * One write of a collection's item, described and not yet made: `commitAll` commits it with
 * others. `R` is what it resolves with there: as the collection's `create`, `update` or `delete`
 * would.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { collection, type Write } from "shell/data";
 *
 * const loans = collection("loans", { schema: v.object({ tool: v.string() }) });
 * const loan: Write<unknown> = loans.creating({ tool: "01JD0Q8ZV3C5X9M2K4W7T1B6RA" });
 * console.log(loan.id); // the new item's id, known before the commit
 * ```
 * @see docs/data.md - Several collections in one commit
 */
export interface Write<R> {
  /** The collection written. */
  readonly collection: string;
  /** The item's id: for a create, the id the new item will have. */
  readonly id: string;
  /** Never set: the type of what `commitAll` gives for this write. */
  readonly resolves?: R;
}

/**
 * What `commitAll` resolves with: each write's result, in the order given.
 *
 * @example
 * ```ts
 * import type { Entity } from "shell/runtime";
 * import type { Results, Write } from "shell/data";
 *
 * type Lend = [Write<Entity<{ tool: string }>>, Write<string | null>];
 * const [loan, deleted]: Results<Lend> = [
 *   { id: "01JD0Q8ZV3C5X9M2K4W7T1B6RA", value: { tool: "drill" }, versionstamp: "1" },
 *   null,
 * ];
 * console.log(loan.value.tool, deleted);
 * ```
 * @see docs/data.md - Several collections in one commit
 */
export type Results<W extends readonly Write<unknown>[]> = {
  -readonly [K in keyof W]: W[K] extends Write<infer R> ? R : never;
};

/**
 * What `commitAll` given `{ skipAll: true }` resolves with when it commits: each write's result,
 * none of them `skip` (a write that skips skips them all).
 *
 * @example
 * ```ts
 * import type { Entity } from "shell/runtime";
 * import type { AllResults, Skip, Write } from "shell/data";
 *
 * type Escalate = [Write<Entity<{ line: string }>>, Write<Entity<{ level: number }> | Skip>];
 * const [, ticket]: AllResults<Escalate> = [
 *   { id: "01JD0Q8ZV3C5X9M2K4W7T1B6RA", value: { line: "raised" }, versionstamp: "1" },
 *   { id: "01JD0Q8ZV3C5X9M2K4W7T1B6RB", value: { level: 1 }, versionstamp: "1" },
 * ];
 * console.log(ticket.value.level);
 * ```
 * @see docs/data.md - Nothing to do
 */
export type AllResults<W extends readonly Write<unknown>[]> = {
  -readonly [K in keyof W]: W[K] extends Write<infer R> ? Exclude<R, Skip> : never;
};

const planned = new WeakMap<Write<unknown>, { plan: Planned; result: (o: Outcome) => unknown }>();

/** The `Write` of `plan`, resolving as `result` says from its outcome. */
export function describe<R>(plan: Planned, result: (outcome: Outcome) => R): Write<R> {
  const write: Write<R> = Object.freeze({ collection: plan.d.name, id: plan.id });
  planned.set(write, { plan, result });
  return write;
}

/**
 * Commits `writes` - of one collection or several - in one atomic commit: all of them, or none.
 * Each is checked as it would be alone (its schema: `ValidationError`; its state machine:
 * `TransitionError`; a unique value taken, two of them taking one value, a versionstamp changed or
 * a check that no longer holds: `ConflictError`; a missing item to update: 404), and the first
 * refusal throws with nothing written. Functions given to `updating` run on the items as they are,
 * and again on the items as they then are when another write wins the race (a bounded number of
 * times: `KvBusyError`). Every change is logged in its views' change logs, in the same commit.
 * An item written twice is a `TypeError`, and so is a `creating` write committed again after its
 * commit succeeded; a commit over KV's limits, a `ValidationError` (422) naming the limit. A
 * function that returns `skip` (nothing to do) drops its write, whose result is then `skip`; with
 * `{ skipAll: true }`, it drops every write of the commit, and `commitAll` resolves with `skip`.
 *
 * @param kv The store.
 * @param writes What to write: `loans.creating(...)`, `tools.updating(...)`, `tools.deleting(...)`.
 * @param options `skipAll`: a write that skips drops them all.
 * @returns Each write's result in order: an entity for `creating` and `updating` (or `skip`), the
 * commit's versionstamp (or `null` for no such item) for `deleting`; or `skip`, with `skipAll`.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { collection, commitAll } from "shell/data";
 *
 * const tools = collection("tools", {
 *   schema: v.object({ name: v.string(), state: v.picklist(["available", "lent"]) }),
 *   transitions: { state: { available: ["lent"], lent: ["available"] } },
 * });
 * const loans = collection("loans", {
 *   schema: v.object({ tool: v.string(), member: v.string() }),
 * });
 *
 * const kv = await Deno.openKv(":memory:");
 * const drill = await tools.create(kv, { name: "Drill", state: "available" });
 * const [loan, lent] = await commitAll(kv, [
 *   loans.creating({ tool: drill.id, member: "ada" }),
 *   tools.updating(drill.id, { state: "lent" }), // refused: no loan either
 * ]);
 * console.log(loan.value.member, lent.value.state); // ada lent
 * ```
 * @see docs/data.md - Several collections in one commit
 */
export function commitAll<const W extends readonly Write<unknown>[]>(
  kv: Deno.Kv,
  writes: W,
  options?: CommitAllOptions & { skipAll?: false },
): Promise<Results<W>>;
/**
 * `commitAll`, where a write whose function returns `skip` drops every write of the commit: then
 * nothing is committed and it resolves with `skip`; otherwise with each write's result.
 *
 * @param kv The store.
 * @param writes What to write, both or neither.
 * @param options `{ skipAll: true }`.
 * @returns Each write's result in order, or `skip`.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { collection, commitAll, skip } from "shell/data";
 *
 * const tickets = collection("tickets", { schema: v.object({ level: v.number() }) });
 * const notes = collection("notes", { schema: v.object({ line: v.string() }) });
 *
 * const kv = await Deno.openKv(":memory:");
 * const ticket = await tickets.create(kv, { level: 1 });
 * const done = await commitAll(kv, [
 *   notes.creating({ line: "escalated" }),
 *   tickets.updating(ticket.id, (t) => t.level >= 1 ? skip : { level: 1 }),
 * ], { skipAll: true });
 * console.log(done === skip); // true: no note either
 * ```
 * @see docs/data.md - Nothing to do
 */
export function commitAll<const W extends readonly Write<unknown>[]>(
  kv: Deno.Kv,
  writes: W,
  options: CommitAllOptions & { skipAll: true },
): Promise<AllResults<W> | Skip>;
/**
 * `commitAll`, with `skipAll` known only when it runs (a `boolean`): each write's result, any of
 * them `skip` when `skipAll` is false; or `skip`, when it is true.
 *
 * @param kv The store.
 * @param writes What to write.
 * @param options `skipAll`: a write that skips drops them all.
 * @returns Each write's result in order, or `skip`.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { collection, commitAll, skip } from "shell/data";
 *
 * const tickets = collection("tickets", { schema: v.object({ level: v.number() }) });
 * const notes = collection("notes", { schema: v.object({ line: v.string() }) });
 *
 * const kv = await Deno.openKv(":memory:");
 * const ticket = await tickets.create(kv, { level: 1 });
 * const strict: boolean = Deno.args.includes("--strict");
 * const done = await commitAll(kv, [
 *   notes.creating({ line: "escalated" }),
 *   tickets.updating(ticket.id, (t) => t.level >= 1 ? skip : { level: 1 }),
 * ], { skipAll: strict });
 * console.log(done === skip || done[1] === skip); // true
 * ```
 * @see docs/data.md - Nothing to do
 */
export function commitAll<const W extends readonly Write<unknown>[]>(
  kv: Deno.Kv,
  writes: W,
  options?: CommitAllOptions,
): Promise<Results<W> | Skip>;
export async function commitAll<const W extends readonly Write<unknown>[]>(
  kv: Deno.Kv,
  writes: W,
  options: CommitAllOptions = {},
): Promise<Results<W> | AllResults<W> | Skip> {
  const described = writes.map((write) => {
    const found = planned.get(write);
    if (!found) {
      throw new TypeError(
        "commitAll takes writes made by a collection's creating, updating or deleting",
      );
    }
    return found;
  });
  const outcomes = await commitWrites(kv, described.map(({ plan }) => plan), options);
  if (options.skipAll && outcomes.some(({ skipped }) => skipped)) return skip;
  return described.map(({ result }, i) => result(outcomes[i])) as Results<W>;
}
