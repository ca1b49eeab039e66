/**
 * @module
 * `skip`: what an update's function returns when the item, as read in the commit's own attempt,
 * shows there is nothing to do (an escalation no longer due, a reminder already sent). The write
 * then writes nothing and says so: `update` resolves with `skip`, and so does `commitAll`, given
 * `{ skipAll: true }`, for the whole commit.
 */

/**
 * Returned by an update's function: nothing to do for this item. Nothing of the write is committed
 * (nor its `also`), and its result is `skip` instead of the item; in `commitAll` with
 * `{ skipAll: true }`, nothing of any write is, and `commitAll` resolves with `skip`.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { collection, skip } from "shell/data";
 *
 * const tickets = collection("tickets", { schema: v.object({ level: v.number() }) });
 * const kv = await Deno.openKv(":memory:");
 * const ticket = await tickets.create(kv, { level: 1 });
 * const raised = await tickets.update(kv, ticket.id, (t) => t.level >= 1 ? skip : { level: 1 });
 * console.log(raised === skip); // true: already raised, nothing written
 * ```
 * @see docs/data.md - Nothing to do
 */
// In the global registry: a product holding two copies of the shell (two versions, a vendored one)
// has one skip, where another copy's was taken as an empty patch - its write and the others' made.
export const skip: unique symbol = Symbol.for("shell/data.skip");

/**
 * The type of `skip`.
 *
 * @example
 * ```ts
 * import { type Skip, skip } from "shell/data";
 * const nothing: Skip = skip;
 * ```
 */
export type Skip = typeof skip;
