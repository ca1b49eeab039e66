/**
 * @module
 * `skip` (`lib/kv/collection/skip.ts`): an update's function that finds nothing to do in the item
 * as read writes nothing and says so - alone (`update` resolves with `skip`, its `also` is not
 * called, no change is logged), in `commitAll` (its result is `skip`, the other writes commit), and
 * in `commitAll` with `skipAll` (nothing of any write, `commitAll` resolves with `skip`); two
 * workers on one SQLite file escalating one ticket at once write exactly one activity line.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  type AllResults,
  collection,
  commitAll,
  ConflictError,
  type Results,
  type Skip,
  skip,
} from "../lib/data.ts";
import { twoWorkers } from "./helpers/kv.ts";

const tickets = collection("skip_tickets", {
  schema: v.object({ title: v.string(), level: v.number() }),
});
const activity = collection("skip_activity", {
  schema: v.object({ ticket: v.string(), line: v.string() }),
  indexes: { byTicket: { key: "ticket" } },
});

/** Raises the ticket to level 1, with its activity line, unless it is there already. */
function escalate(kv: Deno.Kv, id: string) {
  return commitAll(kv, [
    activity.creating({ ticket: id, line: "escalated to level 1" }),
    tickets.updating(id, (ticket) => ticket.level >= 1 ? skip : { level: 1 }),
  ], { skipAll: true });
}

async function linesOf(kv: Deno.Kv, ticket: string): Promise<string[]> {
  const page = await activity.list(kv, { index: "byTicket", value: ticket });
  return page.items.map((item) => item.value.line);
}

Deno.test("update: a function that returns skip writes nothing, calls no also, and says so", async () => {
  using kv = await Deno.openKv(":memory:");
  const ticket = await tickets.create(kv, { title: "Printer", level: 1 });
  const before = await tickets.snapshot(kv);
  let added = 0;
  const result = await tickets.update(
    kv,
    ticket.id,
    (t) => t.level >= 1 ? skip : { level: 1 },
    { also: () => added++ },
  );
  assert.equal(result, skip);
  assert.equal(added, 0);
  assert.equal((await tickets.get(kv, ticket.id))?.versionstamp, ticket.versionstamp);
  assert.equal((await tickets.snapshot(kv)).seq, before.seq, "no change logged");

  // Something to do: the same function writes, and resolves with the item.
  const low = await tickets.create(kv, { title: "Mouse", level: 0 });
  const raised = await tickets.update(kv, low.id, (t) => t.level >= 1 ? skip : { level: 1 });
  assert.notEqual(raised, skip);
  assert.equal(raised !== skip && raised.value.level, 1);
});

Deno.test("commitAll: a write that skips is dropped and reported; the others commit", async () => {
  using kv = await Deno.openKv(":memory:");
  const ticket = await tickets.create(kv, { title: "Printer", level: 1 });
  const [line, raised] = await commitAll(kv, [
    activity.creating({ ticket: ticket.id, line: "looked at" }),
    tickets.updating(ticket.id, (t) => t.level >= 1 ? skip : { level: 1 }),
  ]);
  assert.equal(raised, skip);
  assert.equal(line.value.line, "looked at");
  assert.deepEqual(await linesOf(kv, ticket.id), ["looked at"]);
  assert.equal((await tickets.get(kv, ticket.id))?.versionstamp, ticket.versionstamp);
});

Deno.test("commitAll with skipAll: a write that skips drops every write, and commitAll says so", async () => {
  using kv = await Deno.openKv(":memory:");
  const ticket = await tickets.create(kv, { title: "Printer", level: 0 });
  const first = await escalate(kv, ticket.id);
  assert.notEqual(first, skip);
  if (first === skip) return;
  assert.equal(first[1].value.level, 1);
  assert.deepEqual(await linesOf(kv, ticket.id), ["escalated to level 1"]);

  const before = await activity.snapshot(kv);
  assert.equal(await escalate(kv, ticket.id), skip);
  assert.deepEqual(await linesOf(kv, ticket.id), ["escalated to level 1"], "no second line");
  assert.equal((await activity.snapshot(kv)).seq, before.seq, "no change logged");
});

Deno.test("skip is one value across copies of the module: another copy's skip skips", async () => {
  using kv = await Deno.openKv(":memory:");
  // A second copy, as a product holding the shell twice (two versions, a vendored copy) has: its
  // function returns that copy's skip to this copy's update.
  const copy = new URL("../lib/kv/collection/skip.ts?second-copy", import.meta.url).href;
  const { skip: theirs } = await import(copy);
  assert.notEqual(copy, new URL("../lib/kv/collection/skip.ts", import.meta.url).href);
  const ticket = await tickets.create(kv, { title: "Printer", level: 1 });
  const before = await activity.snapshot(kv);
  const result = await commitAll(kv, [
    activity.creating({ ticket: ticket.id, line: "escalated to level 1" }),
    tickets.updating(ticket.id, () => theirs),
  ], { skipAll: true });
  assert.equal(result, skip);
  assert.deepEqual(await linesOf(kv, ticket.id), [], "no activity line");
  assert.equal((await activity.snapshot(kv)).seq, before.seq);
  assert.equal(await tickets.update(kv, ticket.id, () => theirs), skip);
});

Deno.test("commitAll with skipAll from a boolean: typed as either could resolve, and each does", async () => {
  using kv = await Deno.openKv(":memory:");
  const ticket = await tickets.create(kv, { title: "Printer", level: 1 });
  for (const skipAll of [true, false]) {
    const writes = [
      activity.creating({ ticket: ticket.id, line: `skipAll ${skipAll}` }),
      tickets.updating(ticket.id, (t) => t.level >= 1 ? skip : { level: 1 }),
    ] as const;
    // Before, only a literal true or false was taken: a boolean was a type error.
    const done: Results<typeof writes> | Skip = await commitAll(kv, writes, { skipAll });
    // @ts-expect-error Without skipAll a write's result may be skip itself.
    const all: AllResults<typeof writes> | Skip = done;
    if (skipAll) assert.equal(all, skip);
    else assert.deepEqual(done !== skip && done[1], skip);
  }
  assert.deepEqual(await linesOf(kv, ticket.id), ["skipAll false"]);
});

Deno.test("a skip never hides a conflict: a write's failed check is a 409 though its function skips", async () => {
  using kv = await Deno.openKv(":memory:");
  const ticket = await tickets.create(kv, { title: "Printer", level: 1 });
  const seen = await activity.create(kv, { ticket: ticket.id, line: "seen" });
  await activity.update(kv, seen.id, { line: "seen again" });
  for (const skipAll of [true, false]) {
    await assert.rejects(
      commitAll(kv, [
        activity.creating({ ticket: ticket.id, line: "escalated" }),
        tickets.updating(ticket.id, (t) => t.level >= 1 ? skip : { level: 1 }, {
          checks: [activity.check(seen)],
        }),
      ], { skipAll }),
      (error) => error instanceof ConflictError && error.reason === "checked",
    );
  }
  assert.deepEqual(await linesOf(kv, ticket.id), ["seen again"]);
});

Deno.test("two workers on one SQLite file escalating one ticket: one escalates, the others skip", async () => {
  await twoWorkers(async (one, other) => {
    const ticket = await tickets.create(one, { title: "Printer", level: 0 });
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => escalate(one, ticket.id)),
      ...Array.from({ length: 5 }, () => escalate(other, ticket.id)),
    ]);
    assert.equal(results.filter((result) => result !== skip).length, 1, "one escalation");
    assert.deepEqual(await linesOf(other, ticket.id), ["escalated to level 1"]);
    assert.equal((await tickets.get(one, ticket.id))?.value.level, 1);
  });
});
