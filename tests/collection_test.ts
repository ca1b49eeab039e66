/**
 * @module
 * Collections (`lib/kv/collection/`) in-process, on a store in memory, with a collection of the
 * test's own: writes validated (field errors, sizes), ids sortable, unique and non-unique indexes
 * kept in the item's commit (a unique index per slot refusing overlapping ranges, as docs/data.md
 * shows), optimistic concurrency and read-modify-write, state machines, listing with cursors
 * (10,000 items paged, every one once, in order; cursors a client made refused), a failure at any
 * KV call of a write leaving the store before or after it and never between, and random sequences
 * of writes (fast-check) keeping every index entry and change log true to the items.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import * as v from "valibot";
import {
  collection,
  ConflictError,
  KvLimitError,
  TransitionError,
  ValidationError,
} from "../lib/data.ts";
import { isHttpError } from "../lib/mod.ts";
import { COMMIT_LIMITS, MeasuredAtomic } from "../lib/kv/measured_atomic.ts";
import type { RouteModule } from "../lib/server/manifest.ts";
import { captureLogs } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";
import { assertConsistent, entriesOf, failing, type IndexRule } from "./helpers/collections.ts";
import { tempStore } from "./helpers/kv.ts";

const Card = v.object({
  title: v.pipe(v.string(), v.trim(), v.minLength(1, "A title, please."), v.maxLength(200)),
  column: v.pipe(v.string(), v.minLength(1)),
  owner: v.optional(v.string()),
  points: v.pipe(v.number(), v.integer(), v.minValue(0)),
  state: v.picklist(["open", "active", "closed"]),
  notes: v.optional(v.string()),
});
type CardInput = v.InferInput<typeof Card>;

const cards = collection("cards", {
  schema: Card,
  indexes: {
    byColumn: { key: "column" },
    byOwner: { key: "owner", unique: true },
    bySize: { key: (card) => card.points >= 10 ? "big" : "small" },
  },
  transitions: { state: { open: ["active"], active: ["open", "closed"], closed: ["active"] } },
});

/** The indexes as `assertConsistent` reads them back. */
const RULES: Record<string, IndexRule> = {
  byColumn: { key: (card) => card.column as string },
  byOwner: { key: (card) => card.owner as string | undefined, unique: true },
  bySize: { key: (card) => (card.points as number) >= 10 ? "big" : "small" },
};

const card = (fields: Partial<CardInput> = {}): CardInput => ({
  title: "A card",
  column: "a",
  points: 1,
  state: "open",
  ...fields,
});

const open = () => Deno.openKv(":memory:");

Deno.test("create: validated, an id sortable by creation, indexed and logged in one commit", async () => {
  using kv = await open();
  const first = await cards.create(kv, card({ title: "  First  ", owner: "ada" }));
  const second = await cards.create(kv, card({ title: "Second", column: "b", points: 12 }));
  assert.equal(first.value.title, "First", "the schema's output is stored");
  assert.match(first.id, /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
  assert.ok(first.id < second.id, "ids sort by creation");
  assert.deepEqual(await cards.get(kv, first.id), first);
  assert.deepEqual(await cards.find(kv, "byOwner", "ada"), first);
  assert.equal(await cards.find(kv, "byOwner", "nobody"), null);
  assert.equal(await cards.get(kv, "not an id"), null);
  const items = await assertConsistent(kv, "cards", RULES);
  assert.equal(items.size, 2);
  // One commit: the item, its index entries and its events carry the same versionstamp.
  const stamps = new Set(
    (await entriesOf(kv, "cards"))
      .filter((e) => JSON.stringify(e.value).includes('"First"'))
      .map((e) => e.versionstamp),
  );
  assert.deepEqual([...stamps], [first.versionstamp]);
});

Deno.test("validation: field errors by path, as an expected 422; nothing written", async () => {
  using kv = await open();
  const error = await cards.create(kv, card({ title: "   ", points: -1 })).catch((e) => e);
  assert.ok(error instanceof ValidationError);
  assert.ok(isHttpError(error));
  assert.equal(error.status, 422);
  assert.deepEqual(error.fields.title, ["A title, please."]);
  assert.ok(error.fields.points?.length);
  assert.equal(error.message, "title: A title, please.");
  assert.equal(error.issues.length, 2);
  // A state that is none, sent by a client as any string.
  const state = await cards.create(kv, card({ state: "gone" as "open" })).catch((e) => e);
  assert.ok(state instanceof ValidationError && state.fields.state);
  assert.deepEqual(await entriesOf(kv, "cards"), []);
});

Deno.test("validation: a field in a list is named by its dotted path, the list's own check by its name", async () => {
  using kv = await open();
  const amount = v.pipe(v.number(), v.minValue(1, "A positive amount."));
  const bills = collection("bills", {
    schema: v.object({
      lines: v.pipe(v.array(v.object({ amount })), v.minLength(1, "One line at least.")),
    }),
  });
  const line = await bills.create(kv, { lines: [{ amount: -5 }] }).catch((e) => e);
  assert.ok(line instanceof ValidationError);
  assert.deepEqual(line.fields, { "lines.0.amount": ["A positive amount."] });
  const none = await bills.create(kv, { lines: [] }).catch((e) => e);
  assert.ok(none instanceof ValidationError);
  assert.deepEqual(none.fields, { lines: ["One line at least."] });
});

Deno.test("KV's limits: an item, an index value or a commit too large is a 422 before KV sees it", async () => {
  using kv = await open();
  // 64 KiB a value: no schema limit on `notes`.
  const big = await cards.create(kv, card({ notes: "x".repeat(70_000) })).catch((e) => e);
  assert.ok(big instanceof ValidationError, String(big));
  assert.equal(big.status, 422);
  assert.match(big.form[0], /Too large to store: KV value too large: 7\d{4} bytes serialized/);
  assert.ok(big.cause instanceof KvLimitError);
  // 2 KiB a key: a column name too long for its index entry.
  const key = await cards.create(kv, card({ column: "c".repeat(2100) })).catch((e) => e);
  assert.ok(key instanceof ValidationError);
  assert.match(key.message, /KV key too large/);
  // 800 KiB a commit: an item that fits alone, times its copies (2 index entries, 3 events, …).
  const copies = await cards.create(kv, card({ notes: "x".repeat(60_000) }));
  assert.ok(copies.id, "60 KB and its copies fit");
  const many = collection("many", {
    schema: v.object({ text: v.string(), a: v.string(), b: v.string(), c: v.string() }),
    indexes: Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [`i${i}`, { key: (x: { a: string }) => `${x.a}${i}` }]),
    ),
  });
  const total = await many.create(kv, { text: "x".repeat(60_000), a: "a", b: "b", c: "c" })
    .catch((e) => e);
  assert.ok(total instanceof ValidationError, String(total));
  assert.match(total.message, /KV commit too large: \d+ bytes of keys and values \(max 819200/);
  await assertConsistent(kv, "cards", RULES);
  assert.deepEqual(await entriesOf(kv, "many"), []);
});

Deno.test("MeasuredAtomic refuses exactly what KV refuses, at each of its commit limits", async () => {
  using kv = await open();
  const attempt = async (build: (m: MeasuredAtomic) => void) => {
    const measured = new MeasuredAtomic(kv);
    build(measured);
    let ours = true;
    try {
      measured.assertFits();
    } catch (error) {
      assert.ok(error instanceof KvLimitError);
      ours = false;
    }
    const theirs = await measured.op.commit().then(() => true, () => false);
    return { ours, theirs };
  };
  const cases: [string, (m: MeasuredAtomic, n: number) => void, number][] = [
    ["checks", (m, n) => {
      for (let i = 0; i < n; i++) m.check({ key: ["c", i], versionstamp: null });
    }, COMMIT_LIMITS.checks],
    ["mutations", (m, n) => {
      for (let i = 0; i < n; i++) m.set(["m", i], 1);
    }, COMMIT_LIMITS.mutations],
  ];
  for (const [what, build, limit] of cases) {
    assert.deepEqual(await attempt((m) => build(m, limit)), { ours: true, theirs: true }, what);
    assert.deepEqual(
      await attempt((m) => build(m, limit + 1)),
      { ours: false, theirs: false },
      what,
    );
  }
  // The payload: 13 values of 62 KB and one that takes it to the byte, then one byte over.
  const chunk = "x".repeat(62_000);
  for (const extra of [12_781, 12_782]) {
    const fits = extra === 12_781;
    const result = await attempt((m) => {
      for (let i = 0; i < 13; i++) m.set(["b", i], chunk);
      m.set(["b", 99], "x".repeat(extra));
    });
    assert.deepEqual(result, { ours: fits, theirs: fits }, `payload with ${extra}`);
  }
  // Keys written: 40 keys of 2 KB fit, 41 do not; deleted and checked keys do not count.
  const long = "k".repeat(2000);
  for (const n of [40, 41]) {
    const result = await attempt((m) => {
      for (let i = 0; i < n; i++) m.set([long, i], 1);
      m.delete([long, -1]).check({ key: [long, -2], versionstamp: null });
    });
    assert.deepEqual(result, { ours: n === 40, theirs: n === 40 }, `${n} long keys`);
  }
});

Deno.test("unique: a taken value is a 409 ConflictError; a change frees the old value; absent is not indexed", async () => {
  using kv = await open();
  const ada = await cards.create(kv, card({ owner: "ada" }));
  const taken = await cards.create(kv, card({ owner: "ada" })).catch((e) => e);
  assert.ok(taken instanceof ConflictError);
  assert.equal(taken.status, 409);
  assert.equal(taken.reason, "taken");
  assert.equal(taken.index, "byOwner");
  const grace = await cards.create(kv, card({ owner: "grace" }));
  const moving = await cards.update(kv, grace.id, { owner: "ada" }).catch((e) => e);
  assert.ok(moving instanceof ConflictError && moving.reason === "taken");
  await cards.update(kv, ada.id, { owner: "lovelace" });
  assert.equal(await cards.find(kv, "byOwner", "ada"), null);
  await cards.update(kv, grace.id, { owner: "ada" }); // free now
  await cards.create(kv, card()); // no owner: in no unique entry
  await cards.create(kv, card());
  await assertConsistent(kv, "cards", RULES);
  assert.equal((await cards.find(kv, "byOwner", "ada"))?.id, grace.id);
});

Deno.test("ranges (docs/data.md): a unique index per slot refuses an overlap, also from two stores at once", async () => {
  const Booking = v.object({
    room: v.string(),
    start: v.number(),
    hours: v.number(),
    state: v.picklist(["requested", "confirmed", "cancelled"]),
  });
  type Item = v.InferOutput<typeof Booking>;
  const slot = (hour: number) => ({
    key: (b: Item) =>
      b.state === "confirmed" && b.start <= hour && hour < b.start + b.hours ? b.room : undefined,
    unique: true as const,
  });
  const bookings = collection("bookings", {
    schema: Booking,
    indexes: { h10: slot(10), h11: slot(11), h12: slot(12) },
    transitions: { state: { requested: ["confirmed", "cancelled"], confirmed: ["cancelled"] } },
  });
  await using store = await tempStore();
  const path = store.path;
  // Two handles on one file: two workers, whose commits race in SQLite rather than take turns.
  using one = await Deno.openKv(path);
  using other = await Deno.openKv(path);
  const morning = await bookings.create(one, {
    room: "A",
    start: 10,
    hours: 2,
    state: "requested",
  });
  const noon = await bookings.create(one, { room: "A", start: 11, hours: 2, state: "requested" });
  const results = await Promise.allSettled([
    bookings.update(one, morning.id, { state: "confirmed" }),
    bookings.update(other, noon.id, { state: "confirmed" }),
  ]);
  assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
  const [refused] = results.filter((r) => r.status === "rejected");
  assert.ok(refused.reason instanceof ConflictError && refused.reason.reason === "taken");
  assert.equal(refused.reason.index, "h11"); // the one hour both cover
  const winner = results[0].status === "fulfilled" ? morning : noon;
  const loser = winner === morning ? noon : morning;
  await bookings.update(one, winner.id, { state: "cancelled" }); // frees its slots
  await bookings.update(other, loser.id, { state: "confirmed" });
});

Deno.test("checks: a write holds only while another collection's item is as read, also against another store", async () => {
  const takes = collection("takes", {
    schema: v.object({ state: v.picklist(["counting", "submitted"]) }),
    transitions: { state: { counting: ["submitted"], submitted: ["counting"] } },
  });
  const counts = collection("counts", {
    schema: v.object({ take: v.string(), sku: v.string(), n: v.number() }),
    indexes: { byTake: { key: "take" } },
  });
  await using store = await tempStore();
  const path = store.path;
  // Two handles on one file: two workers, whose commits race in SQLite rather than take turns.
  using one = await Deno.openKv(path);
  using other = await Deno.openKv(path);
  const take = await takes.create(one, { state: "counting" });
  const counted = await counts.create(one, { take: take.id, sku: "A", n: 1 }, {
    checks: [takes.check(take)],
  });
  // Counts keep coming from one worker while another submits the stock take: none may commit
  // after the submit, however the commits interleave.
  const entering = Array.from(
    { length: 20 },
    (_, i) =>
      counts.create(one, { take: take.id, sku: `S${i}`, n: i }, { checks: [takes.check(take)] }),
  );
  // Settled as they end: one refused while the submit is awaited is not an unhandled rejection.
  const settled = Promise.allSettled(entering);
  const submitted = await takes.update(other, take.id, { state: "submitted" });
  const results = await settled;
  for (const result of results) {
    if (result.status === "fulfilled") {
      assert.ok(
        result.value.versionstamp < submitted.versionstamp,
        "committed before the submit",
      );
    } else {
      assert.ok(result.reason instanceof ConflictError, String(result.reason));
      // The stock take is what changed, not the count: the refusal says so.
      assert.equal(result.reason.reason, "checked");
      assert.equal(result.reason.checked, "takes");
      assert.equal(result.reason.status, 409);
    }
  }
  const written = results.filter((r) => r.status === "fulfilled").length;
  const listed = await counts.list(other, { index: "byTake", value: take.id });
  assert.equal(listed.items.length, 1 + written);
  const snapshot = await counts.snapshot(other, { index: "byTake", value: take.id });
  assert.equal(snapshot.seq, 1 + written, "a refused write logs no change");

  // The stale stock take refuses creates, updates and deletes alike; the fresh one lets them by.
  const stale = { checks: [takes.check(take)] };
  await assert.rejects(
    counts.create(one, { take: take.id, sku: "B", n: 1 }, stale),
    ConflictError,
  );
  await assert.rejects(counts.update(one, counted.id, { n: 2 }, stale), ConflictError);
  await assert.rejects(counts.delete(one, counted.id, stale), ConflictError);
  assert.equal((await counts.get(other, counted.id))?.value.n, 1);
  const reopened = await takes.update(other, take.id, { state: "counting" });
  const fresh = { checks: [takes.check(reopened)] };
  assert.equal((await counts.update(one, counted.id, { n: 2 }, fresh)).value.n, 2);
  assert.ok(await counts.delete(one, counted.id, fresh));
});

Deno.test("checkAbsent: a write holds only while no item of another collection has a unique value, also against another store", async () => {
  const loans = collection("loans", {
    schema: v.object({ book: v.string(), state: v.picklist(["open", "returned"]) }),
    indexes: {
      openByBook: { key: (loan) => loan.state === "open" ? loan.book : undefined, unique: true },
    },
  });
  const reservations = collection("reservations", {
    schema: v.object({ book: v.string(), who: v.string() }),
    indexes: { byBook: { key: "book" } },
  });
  await using store = await tempStore();
  const path = store.path;
  // Two handles on one file: two workers, whose commits race in SQLite rather than take turns.
  using one = await Deno.openKv(path);
  using other = await Deno.openKv(path);
  const noLoan = (book: string) => ({ checks: [loans.checkAbsent("openByBook", book)] });
  const first = await reservations.create(one, { book: "b1", who: "ada" }, noLoan("b1"));
  // Reservations keep coming from one worker while another lends the book: none may commit
  // after the loan, however the commits interleave.
  const entering = Promise.allSettled(Array.from(
    { length: 20 },
    (_, i) => reservations.create(one, { book: "b1", who: `r${i}` }, noLoan("b1")),
  ));
  const loan = await loans.create(other, { book: "b1", state: "open" });
  const results = await entering;
  for (const result of results) {
    if (result.status === "fulfilled") {
      assert.ok(result.value.versionstamp < loan.versionstamp, "committed before the loan");
    } else {
      assert.ok(result.reason instanceof ConflictError, String(result.reason));
      assert.equal(result.reason.reason, "exists");
      assert.equal(result.reason.code, "exists");
      assert.equal(result.reason.checked, "loans");
      assert.equal(result.reason.index, "openByBook");
      assert.equal(result.reason.status, 409);
    }
  }
  const written = results.filter((r) => r.status === "fulfilled").length;
  const listed = await reservations.list(other, { index: "byBook", value: "b1" });
  assert.equal(listed.items.length, 1 + written);

  // While the loan is open, creates, updates and deletes that need the book free are refused;
  // another book's are not.
  await assert.rejects(
    reservations.create(one, { book: "b1", who: "bob" }, noLoan("b1")),
    ConflictError,
  );
  await assert.rejects(
    reservations.update(one, first.id, { who: "bob" }, noLoan("b1")),
    ConflictError,
  );
  await assert.rejects(reservations.delete(one, first.id, noLoan("b1")), ConflictError);
  assert.equal((await reservations.get(other, first.id))?.value.who, "ada");
  await reservations.create(one, { book: "b2", who: "bob" }, noLoan("b2"));
  // Returned: the loan leaves the index in the commit that returns it, and the book is free.
  await loans.update(other, loan.id, { state: "returned" });
  assert.equal(
    (await reservations.update(one, first.id, { who: "cy" }, noLoan("b1"))).value.who,
    "cy",
  );

  // Only a unique index has one key per value to check.
  // @ts-expect-error: not a unique index
  assert.throws(() => reservations.checkAbsent("byBook", "b1"), TypeError);
  // @ts-expect-error: not a key part
  assert.throws(() => loans.checkAbsent("openByBook", {}), TypeError);
});

Deno.test("attack 14: checkAbsent of a value no item can hold (a user's 3 KB text) holds, rather than a TypeError's 500", async () => {
  // docs/data.md's reserve(): the book a user typed goes to find() and checkAbsent() as it is.
  const loans = collection("loans", {
    schema: v.object({ book: v.string(), state: v.picklist(["open", "returned"]) }),
    indexes: {
      openByBook: { key: (loan) => loan.state === "open" ? loan.book : undefined, unique: true },
    },
  });
  const notes = collection("notes", { schema: v.object({ text: v.string() }) });
  using kv = await Deno.openKv(":memory:");
  const typed = "b".repeat(3_000);
  assert.equal(await loans.find(kv, "openByBook", typed), null, "no item has it");
  const note = await notes.create(kv, { text: typed }, {
    checks: [loans.checkAbsent("openByBook", typed)],
  });
  assert.equal((await notes.get(kv, note.id))?.value.text, typed);
  // A value of its index beside it is checked as ever.
  await loans.create(kv, { book: "b1", state: "open" });
  await assert.rejects(
    notes.create(kv, { text: "x" }, { checks: [loans.checkAbsent("openByBook", "b1")] }),
    ConflictError,
  );
});

Deno.test("checkAbsent on the collection written: the item's own value is no conflict, another's is", async () => {
  const users = collection("users", {
    schema: v.object({ email: v.string(), name: v.string() }),
    indexes: { byEmail: { key: "email", unique: true } },
  });
  using kv = await Deno.openKv(":memory:");
  const free = (email: string) => ({ checks: [users.checkAbsent("byEmail", email)] });
  // A write that takes the value it checks absent: the check is of the store before it.
  const ada = await users.create(kv, { email: "ada@x", name: "Ada" }, free("ada@x"));
  // One that keeps it, or deletes its holder: the only item with it is the one written. Before,
  // each was refused by itself ("exists": "reload and try again", which could never pass).
  const renamed = await users.update(kv, ada.id, { name: "Ada L." }, free("ada@x"));
  assert.equal(renamed.value.name, "Ada L.");
  // Another item with the value is refused, whatever the write.
  const bob = await users.create(kv, { email: "bob@x", name: "Bob" });
  await assert.rejects(
    users.update(kv, bob.id, { name: "B." }, free("ada@x")),
    (error) => error instanceof ConflictError && error.reason === "exists",
  );
  await assert.rejects(
    users.update(kv, bob.id, { email: "ada@x" }, free("ada@x")),
    (error) => error instanceof ConflictError && error.reason === "exists",
  );
  assert.ok(await users.delete(kv, ada.id, free("ada@x")), "deleted");
  assert.equal(await users.find(kv, "byEmail", "ada@x"), null);
});

Deno.test('index values KV keeps apart (0 and -0, a client\'s JSON or Number("-0")) are moves, not the same', async () => {
  // 0 === -0: an update from 0 to -0 kept the entry under 0 and added one under -0, the item in
  // both views (for good, as its delete removed only -0's); a unique -0 was not claimed, so it
  // was written over another item's.
  const Seat = v.object({ row: v.number(), seat: v.number() });
  const seats = collection("seats", {
    schema: Seat,
    indexes: { byRow: { key: "row" }, bySeat: { key: "seat", unique: true } },
  });
  const rules: Record<string, IndexRule> = {
    byRow: { key: (item) => item.row as number },
    bySeat: { key: (item) => item.seat as number, unique: true },
  };
  using kv = await open();
  const first = await seats.create(kv, { row: 0, seat: -0 });
  const second = await seats.create(kv, { row: 1, seat: 0 });
  await seats.update(kv, first.id, { row: -0 });
  const ids = async (value: number) =>
    (await seats.list(kv, { index: "byRow", value })).items.map((item) => item.id);
  assert.deepEqual(await ids(0), []);
  assert.deepEqual(await ids(-0), [first.id]);
  const taken = await seats.update(kv, second.id, { seat: -0 }).catch((e) => e);
  assert.ok(taken instanceof ConflictError, "-0 is the first's seat");
  await seats.delete(kv, first.id);
  await assertConsistent(kv, "seats", rules);
});

Deno.test("update: a stale versionstamp is a 409, a function sees the item as it is, no change writes nothing", async () => {
  using kv = await open();
  const created = await cards.create(kv, card({ points: 1 }));
  const moved = await cards.update(kv, created.id, { column: "b" }, {
    versionstamp: created.versionstamp,
  });
  assert.equal(moved.value.column, "b");
  assert.ok(moved.versionstamp > created.versionstamp);
  const stale = await cards.update(kv, created.id, { column: "c" }, {
    versionstamp: created.versionstamp,
  }).catch((e) => e);
  assert.ok(stale instanceof ConflictError && stale.reason === "changed" && stale.status === 409);

  // Read-modify-write: fifty increments at once, none lost.
  await Promise.all(
    Array.from(
      { length: 50 },
      () => cards.update(kv, created.id, (c) => ({ points: c.points + 1 })),
    ),
  );
  assert.equal((await cards.get(kv, created.id))?.value.points, 51);

  const before = await entriesOf(kv, "cards");
  const same = await cards.update(kv, created.id, { title: "A card" });
  assert.deepEqual(await entriesOf(kv, "cards"), before, "an update that changes nothing");
  assert.equal(same.versionstamp, (await cards.get(kv, created.id))!.versionstamp);

  for (const id of ["01J0000000000000000000000Z", "junk"]) {
    const missing = await cards.update(kv, id, { points: 2 }).catch((e) => e);
    assert.ok(isHttpError(missing) && missing.status === 404, String(missing));
  }
  await assertConsistent(kv, "cards", RULES);
});

Deno.test("transitions: the declared moves pass, any other is a 409 TransitionError", async () => {
  using kv = await open();
  const { id } = await cards.create(kv, card({ state: "closed" })); // any start the schema allows
  const skip = await cards.update(kv, id, { state: "open" }).catch((e) => e);
  assert.ok(skip instanceof TransitionError);
  assert.equal(skip.status, 409);
  assert.deepEqual([skip.field, skip.from, skip.to], ["state", "closed", "open"]);
  await cards.update(kv, id, { state: "active" });
  await cards.update(kv, id, { state: "open" });
  await cards.update(kv, id, { state: "open", points: 3 }); // staying is no transition
  assert.equal((await cards.get(kv, id))?.value.state, "open");
});

Deno.test("staying put passes: two moves to one state both succeed; a function saying the start lets one", async () => {
  using kv = await open();
  const { id } = await cards.create(kv, card({ state: "open" }));
  // Two desks move the card to active at once: the second stays put, and its owner wins silently.
  const both = await Promise.allSettled([
    cards.update(kv, id, { state: "active", owner: "ada" }),
    cards.update(kv, id, { state: "active", owner: "bea" }),
  ]);
  assert.deepEqual(both.map((r) => r.status), ["fulfilled", "fulfilled"]);
  assert.equal((await cards.get(kv, id))?.value.owner, "bea");

  // docs/data.md's pattern: the move says what it starts from, so the second is refused.
  const again = await cards.create(kv, card({ state: "open" }));
  const start = (owner: string) =>
    cards.update(kv, again.id, (c) => {
      if (c.state !== "open") throw new ConflictError("cards", "changed");
      return { state: "active", owner: `${owner}2` };
    });
  const one = await Promise.allSettled([start("ada"), start("bea")]);
  assert.deepEqual(one.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
  assert.equal((await cards.get(kv, again.id))?.value.owner, "ada2");
  await assertConsistent(kv, "cards", RULES);
});

Deno.test("attack 21: an update function that changes the item it was given in place writes what it says, through the state machine and the indexes", async () => {
  using kv = await open();
  const { id } = await cards.create(kv, card({ column: "a", state: "open", notes: "x" }));
  // Changed in place and returned: written, not taken for "no change".
  const pushed = await cards.update(kv, id, (c) => {
    c.notes += "y";
    return c;
  });
  assert.equal(pushed.value.notes, "xy");
  assert.equal((await cards.get(kv, id))?.value.notes, "xy");
  // Changed in place beside what is returned: the move is the state machine's to refuse...
  const skipped = await cards.update(kv, id, (c) => {
    c.state = "closed";
    return { points: 2 };
  }).catch((e) => e);
  assert.ok(skipped instanceof TransitionError, String(skipped));
  // ...and the item leaves its old index entries.
  await cards.update(kv, id, (c) => {
    c.column = "b";
    return { points: 3 };
  });
  assert.equal((await cards.get(kv, id))?.value.column, "b");
  await assertConsistent(kv, "cards", RULES);
});

Deno.test("delete: the item, its entries, a change; again, nothing; a stale versionstamp is a 409", async () => {
  using kv = await open();
  const kept = await cards.create(kv, card({ owner: "kept" }));
  const gone = await cards.create(kv, card({ owner: "gone", column: "b" }));
  const moved = await cards.update(kv, kept.id, { points: 20 });
  const stale = await cards.delete(kv, kept.id, { versionstamp: kept.versionstamp }).catch((e) =>
    e
  );
  assert.ok(stale instanceof ConflictError && stale.reason === "changed");
  const stamp = await cards.delete(kv, gone.id, { versionstamp: gone.versionstamp });
  assert.match(String(stamp), /^[0-9a-f]{20}$/);
  assert.equal(await cards.delete(kv, gone.id), null);
  assert.equal(await cards.delete(kv, "junk"), null);
  assert.equal(await cards.get(kv, gone.id), null);
  const items = await assertConsistent(kv, "cards", RULES);
  assert.deepEqual([...items.keys()], [moved.id]);
});

Deno.test("list: by id, by one index value, by index values; reverse; cursors page to the end", async () => {
  using kv = await open();
  const made = [];
  for (const [i, column] of ["b", "a", "b", "c", "a", "b"].entries()) {
    made.push(await cards.create(kv, card({ title: `t${i}`, column, points: i * 3 })));
  }
  const titles = (page: { items: { value: { title: string } }[] }) =>
    page.items.map((item) => item.value.title);
  assert.deepEqual(titles(await cards.list(kv)), ["t0", "t1", "t2", "t3", "t4", "t5"]);
  assert.deepEqual(titles(await cards.list(kv, { reverse: true, limit: 2 })), ["t5", "t4"]);
  assert.deepEqual(titles(await cards.list(kv, { index: "byColumn", value: "b" })), [
    "t0",
    "t2",
    "t5",
  ]);
  assert.deepEqual(titles(await cards.list(kv, { index: "byColumn" })), [
    "t1",
    "t4",
    "t0",
    "t2",
    "t5",
    "t3",
  ]);
  assert.deepEqual(titles(await cards.list(kv, { index: "byOwner" })), []);
  // Pages of 4 then 2, the last without a cursor; reverse the same way.
  for (const reverse of [false, true]) {
    const first = await cards.list(kv, { limit: 4, reverse });
    assert.ok(first.cursor);
    const second = await cards.list(kv, { limit: 4, reverse, cursor: first.cursor });
    assert.equal(second.cursor, null);
    const all = [...titles(first), ...titles(second)];
    assert.deepEqual(all, reverse ? ["t5", "t4", "t3", "t2", "t1", "t0"] : all.toSorted());
  }
  // An exact fit ends with no empty page.
  assert.equal((await cards.list(kv, { limit: 6 })).cursor, null);
  // Limits are clamped, not trusted.
  assert.equal((await cards.list(kv, { limit: -5 })).items.length, 1);
  assert.equal((await cards.list(kv, { limit: 2 ** 40 })).items.length, 6);
  assert.equal((await cards.list(kv, { limit: Number.NaN })).items.length, 6);
  await assert.rejects(cards.list(kv, { index: "nope" as "byColumn" }), /no index "nope"/);
  await assert.rejects(cards.list(kv, { index: "byOwner", value: "x" }), TypeError);
});

Deno.test("cursors: a made-up, tampered or other listing's cursor is a 400, never a read elsewhere", async () => {
  using kv = await open();
  for (let i = 0; i < 5; i++) await cards.create(kv, card({ column: i % 2 ? "a" : "b" }));
  const { cursor } = await cards.list(kv, { index: "byColumn", value: "a", limit: 1 });
  assert.ok(cursor);
  const refused = async (query: Parameters<typeof cards.list>[1], why: RegExp) => {
    const error = await cards.list(kv, query).catch((e) => e);
    assert.ok(isHttpError(error) && error.status === 400, `${JSON.stringify(query)}: ${error}`);
    assert.match(error.message, why);
  };
  await refused({ index: "byColumn", value: "b", cursor }, /another listing/);
  await refused({ cursor }, /another listing/);
  await refused({ index: "byColumn", value: "a", cursor, reverse: true }, /another listing/);
  const [tag] = cursor.split(".");
  for (
    const junk of ["", "x", "garbage!!", `${tag}.`, `${tag}.////`, `${tag}.${"A".repeat(2900)}`]
  ) {
    if (junk === "") continue; // no cursor: the first page
    await refused({ index: "byColumn", value: "a", cursor: junk }, /cursor/);
  }
  // Bytes that decode, but to a position past anything of this listing: an empty page, in it.
  const far = `${tag}.${btoa("\xff\xff\xff\xff").replaceAll("/", "_")}`;
  assert.deepEqual(
    (await cards.list(kv, { index: "byColumn", value: "a", cursor: far })).items,
    [],
  );
});

// 10,000 writes on an in-memory store, one commit each: about 10 s on the shared 2-core machine.
Deno.test("10,000 items paged: every item exactly once, in order, by id and by index", async () => {
  using kv = await open();
  const notes = collection("notes", {
    schema: v.object({ n: v.number(), parity: v.string() }),
    indexes: { byParity: { key: "parity" } },
  });
  const ids: string[] = [];
  for (let n = 0; n < 10_000; n++) {
    ids.push((await notes.create(kv, { n, parity: n % 2 ? "odd" : "even" })).id);
  }
  const pages = async (query: { index?: "byParity"; value?: string; reverse?: boolean }) => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let count = 0;
    do {
      const page: Awaited<ReturnType<typeof notes.list>> = await notes.list(kv, {
        ...query,
        limit: 333,
        cursor,
      });
      seen.push(...page.items.map((item) => item.value.n));
      cursor = page.cursor;
      assert.ok(++count <= 40, "pages end");
    } while (cursor);
    return seen;
  };
  const all = Array.from({ length: 10_000 }, (_, n) => n);
  assert.deepEqual(await pages({}), all);
  assert.deepEqual(await pages({ reverse: true }), all.toReversed());
  assert.deepEqual(await pages({ index: "byParity", value: "odd" }), all.filter((n) => n % 2));
  assert.deepEqual(await pages({ index: "byParity" }), [
    ...all.filter((n) => n % 2 === 0),
    ...all.filter((n) => n % 2),
  ]);
  assert.deepEqual(ids, ids.toSorted(), "ids in creation order");
});

Deno.test("a failure at any KV call of a write leaves the store as before it or after it, never between", async () => {
  const writes: [string, (kv: Deno.Kv, id: string) => Promise<unknown>][] = [
    ["create", (kv) => cards.create(kv, card({ owner: "new", column: "z", points: 50 }))],
    // Every index changes: entries deleted and written, unique values freed and taken, events
    // in four views.
    ["update", (kv, id) => cards.update(kv, id, { column: "y", owner: "moved", points: 30 })],
    ["delete", (kv, id) => cards.delete(kv, id)],
  ];
  for (const [what, write] of writes) {
    // How many calls a write makes when nothing fails.
    using probe = await open();
    const { id } = await cards.create(probe, card({ owner: "old", column: "x" }));
    const counted = failing(probe, 0);
    await write(counted.kv, id);
    const calls = counted.calls();
    assert.ok(calls >= 3, `${what}: ${calls} calls`);
    for (let failAt = 1; failAt <= calls; failAt++) {
      using kv = await open();
      const existing = await cards.create(kv, card({ owner: "old", column: "x" }));
      await cards.create(kv, card({ owner: "bystander" }));
      const before = await entriesOf(kv, "cards");
      const error = await write(failing(kv, failAt).kv, existing.id).then(() => null, (e) => e);
      assert.match(String(error), /injected/, `${what}, call ${failAt}`);
      assert.deepEqual(await entriesOf(kv, "cards"), before, `${what}, call ${failAt}`);
      await assertConsistent(kv, "cards", RULES);
      // The same write, run again, goes through and leaves it consistent.
      await write(kv, existing.id);
      await assertConsistent(kv, "cards", RULES);
    }
  }
});

Deno.test("property: random writes keep every index entry and change log true to the items", async () => {
  const columns = ["a", "b", "c"];
  const owners = [undefined, "ada", "grace", "linus"];
  const op = fc.oneof(
    fc.record({
      kind: fc.constant("create" as const),
      column: fc.constantFrom(...columns),
      owner: fc.constantFrom(...owners),
      points: fc.nat(20),
    }),
    fc.record({
      kind: fc.constant("update" as const),
      pick: fc.nat(),
      column: fc.option(fc.constantFrom(...columns), { nil: undefined }),
      owner: fc.option(fc.constantFrom(...owners), { nil: undefined }),
      points: fc.option(fc.nat(20), { nil: undefined }),
      state: fc.option(fc.constantFrom("open", "active", "closed" as const), { nil: undefined }),
    }),
    fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
      using kv = await open();
      const ids: string[] = [];
      const expected = (error: unknown) =>
        error instanceof ConflictError || error instanceof TransitionError;
      // Half of them at once: concurrent writes to the same items and unique values.
      await Promise.all(ops.map(async (o, i) => {
        if (i % 2) await new Promise((r) => setTimeout(r, 0));
        try {
          if (o.kind === "create") {
            ids.push((await cards.create(kv, card({ ...o, state: "open" }))).id);
          } else if (ids.length) {
            const id = ids[o.pick % ids.length];
            if (o.kind === "delete") await cards.delete(kv, id);
            else {
              const { pick: _, kind: __, ...fields } = o;
              const patch = Object.fromEntries(
                Object.entries(fields).filter(([, value]) => value !== undefined),
              );
              await cards.update(kv, id, patch).catch((error) => {
                if (!(isHttpError(error) && error.status === 404)) throw error;
              });
            }
          }
        } catch (error) {
          if (!expected(error)) throw error;
        }
      }));
      await assertConsistent(kv, "cards", RULES);
    }),
    { numRuns: 60 },
  );
});

Deno.test("a malformed declaration is a TypeError naming what is wrong", () => {
  const schema = v.object({ a: v.string() });
  assert.throws(() => collection("", { schema }), /the name must be 1 to 100 characters/);
  assert.throws(() => collection("x", { schema: {} as typeof schema }), /valibot schema/);
  assert.throws(
    // @ts-expect-error: an index needs a key
    () => collection("x", { schema, indexes: { byA: {} } }),
    /index byA needs a key/,
  );
  assert.throws(
    // @ts-expect-error: a state machine maps states to arrays
    () => collection("x", { schema, transitions: { a: { x: "y" } } }),
    /transitions.a.x must be an array/,
  );
});

Deno.test("attack 22: a retention KV cannot expire by is a TypeError at the declaration, not at every write", async () => {
  using kv = await open();
  const schema = v.object({ a: v.string() });
  // "Keep them": before, declared, and every create, update and delete threw KV's TypeError
  // ("expireIn must be a non-negative integer"; "expireIn is too large" for 10^16).
  for (const retainMs of [Infinity, 1e16, 90 * 60_000 / 7]) {
    assert.throws(
      () => collection("kept", { schema, live: { retainMs } }),
      /live\.retainMs must be whole milliseconds from 1 to a year's/,
    );
  }
  const year = collection("kept", { schema, live: { retainMs: 366 * 24 * 3_600_000 } });
  assert.equal((await year.create(kv, { a: "x" })).value.a, "x");
});

Deno.test("a live feed's ring or poll that cannot work is a TypeError at the declaration", () => {
  const schema = v.object({ a: v.string() });
  // A ring of 0 kept every change in memory; a poll of 0 ms, a negative one or Infinity ran
  // without pause (setInterval takes them as at once).
  for (const ringSize of [0, 2.5, Infinity, 10_001]) {
    assert.throws(
      () => collection("ringed", { schema, live: { ringSize } }),
      /collection\("ringed"\): live\.ringSize must be a whole number of changes from 1 to 10000/,
    );
  }
  for (const pollIntervalMs of [0, -5, 1.5, Infinity, 3_600_001]) {
    assert.throws(
      () => collection("polled", { schema, live: { pollIntervalMs } }),
      /collection\("polled"\): live\.pollIntervalMs must be whole milliseconds from 10/,
    );
  }
  collection("bounds", { schema, live: { ringSize: 10_000, pollIntervalMs: 10 } });
});

Deno.test("a live backlog KV cannot read is a TypeError at the declaration", () => {
  const schema = v.object({ a: v.string() });
  // The limit of KV's read of what a page missed: Infinity ("never a snapshot"), 0 or a fraction
  // failed every page behind its feed's ring with KV's bare "Limit must be a positive integer".
  for (const maxBacklog of [Infinity, 0, 12.5, -1, NaN, 10_001]) {
    assert.throws(
      () => collection("behind", { schema, live: { maxBacklog } }),
      /collection\("behind"\): live\.maxBacklog must be a whole number of changes from 1 to 10000/,
    );
  }
  collection("bounds", { schema, live: { maxBacklog: 1 } });
  collection("bounds", { schema, live: { maxBacklog: 10_000 } });
});

Deno.test("an index key that gives something else than a key part is a TypeError naming the index", async () => {
  using kv = await open();
  const dated = collection("dated", {
    schema: v.object({ at: v.date() }),
    indexes: { byAt: { key: (item) => item.at as unknown as string } },
  });
  await assert.rejects(
    dated.create(kv, { at: new Date() }),
    /index byAt gave \[object Date\]: an index value is a string, number/,
  );
  assert.deepEqual(await entriesOf(kv, "dated"), []);
});

Deno.test("types: the item's type comes from the schema, index names from the declaration", async () => {
  using kv = await open();
  const created = await cards.create(kv, card());
  const state: "open" | "active" | "closed" = created.value.state;
  await cards.find(kv, "byOwner", "ada");
  // @ts-expect-error: byColumn is not unique
  await cards.find(kv, "byColumn", "a").catch(() => {});
  await cards.snapshot(kv, { index: "byColumn", value: "a" });
  // @ts-expect-error: a unique index has no live view
  await cards.snapshot(kv, { index: "byOwner", value: "ada" }).catch(() => {});
  // @ts-expect-error: not a state
  await cards.update(kv, created.id, { state: "gone" }).catch(() => {});
  collection("typed", {
    schema: Card,
    // @ts-expect-error: no such field
    indexes: { byNothing: { key: "nothing" } },
  });
  collection("typed", {
    schema: Card,
    // @ts-expect-error: not a state of the field
    transitions: { state: { open: ["gone"] } },
  });
  assert.equal(state, "open");
});

Deno.test("a refused write answers through the product-errors path: its status, its message, no failure", async () => {
  using kv = await open();
  const first = await cards.create(kv, card({ owner: "ada", state: "closed" }));
  await cards.update(kv, first.id, { points: 7 }); // the versionstamp the client holds is old now
  // Another collection's item, read before it changed, and a value it holds now.
  const boards = collection("boards", {
    schema: v.object({ owner: v.string() }),
    indexes: { byOwner: { key: "owner", unique: true } },
  });
  const board = await boards.create(kv, { owner: "ada" });
  await boards.update(kv, board.id, { owner: "grace" });
  const refusals: Record<string, () => Promise<unknown>> = {
    "stale": () => cards.update(kv, first.id, { points: 8 }, { versionstamp: first.versionstamp }),
    "taken": () => cards.create(kv, card({ owner: "ada" })),
    "transition": () => cards.update(kv, first.id, { state: "open" }),
    "invalid": () => cards.create(kv, card({ title: "" })),
    "gone": () => cards.update(kv, "01J0000000000000000000000Z", { points: 1 }),
    "checked": () => cards.create(kv, card(), { checks: [boards.check(board)] }),
    "exists": () => cards.create(kv, card(), { checks: [boards.checkAbsent("byOwner", "grace")] }),
  };
  const api: RouteModule = {
    handler: {
      async POST(req) {
        await refusals[new URL(req.url).searchParams.get("what")!]();
        return new Response("written");
      },
    },
  };
  const app = memoryApp({ routes: { "api/cards.ts": api } }, { kv });
  using logs = captureLogs();
  const expected: Record<string, [number, RegExp]> = {
    stale: [409, /changed meanwhile/],
    taken: [409, /Another item has this byOwner/],
    transition: [409, /Cannot go from closed to open/],
    invalid: [422, /title: A title, please\./],
    gone: [404, /No such item in cards/],
    // The checked item's collection is named (not "this", the card, as before), its id and the
    // value checked are not.
    checked: [409, /^The boards item this depends on was changed meanwhile/],
    exists: [409, /^A boards item with this byOwner exists now: reload and try again\.$/],
  };
  for (const [what, [status, message]] of Object.entries(expected)) {
    const res = await app.request(`/api/cards?what=${what}`, { method: "POST" });
    assert.equal(res.status, status, what);
    const body = await res.json();
    assert.equal(body.error.status, status, what);
    assert.match(body.error.message, message, what);
    assert.doesNotMatch(body.error.message, new RegExp(`${board.id}|grace`), what);
    // The code names the refusal for an island or a client, whatever the message says.
    assert.equal(body.error.code, what === "stale" ? "changed" : what, what);
  }
  assert.deepEqual(logs.lines.filter((line) => line.level === "error"), [], "no failure logged");
});

Deno.test("list by prefix: an index's string values that start with it, paged, per tenant", async () => {
  // adopt9's search by patient name prefix, within one clinic, had no way to be asked: an index
  // lists one value or all of them.
  using kv = await open();
  const patients = collection("patients", {
    schema: v.object({ clinic: v.string(), name: v.string() }),
    indexes: { byName: { key: (p) => `${p.clinic}/${p.name.toLowerCase()}` } },
  });
  const names = [
    ["north", "Smyth"],
    ["north", "Sand"],
    ["north", "smith"],
    ["south", "Smith"],
    ["north", "Sm"],
    ["north", "Smz"],
    ["north", "Sn"],
  ];
  for (const [clinic, name] of names) await patients.create(kv, { clinic, name });
  const named = (page: { items: { value: { name: string } }[] }) =>
    page.items.map((item) => item.value.name);
  const query = { index: "byName", prefix: "north/sm" } as const;
  assert.deepEqual(named(await patients.list(kv, query)), ["Sm", "smith", "Smyth", "Smz"]);
  assert.deepEqual(named(await patients.list(kv, { ...query, reverse: true })), [
    "Smz",
    "Smyth",
    "smith",
    "Sm",
  ]);
  const first = await patients.list(kv, { ...query, limit: 3 });
  assert.deepEqual(named(first), ["Sm", "smith", "Smyth"]);
  const second = await patients.list(kv, { ...query, limit: 3, cursor: first.cursor });
  assert.deepEqual([named(second), second.cursor], [["Smz"], null]);
  // A cursor names its prefix: another prefix's, or the whole index's, is refused.
  const other = await patients.list(kv, {
    index: "byName",
    prefix: "north/s",
    cursor: first.cursor,
  })
    .catch((e) => e);
  assert.ok(isHttpError(other) && other.status === 400);
  assert.deepEqual(
    named(await patients.list(kv, { index: "byName", prefix: "x".repeat(3000) })),
    [],
  );
  // A unique index too; and a prefix needs an index and no value.
  await cards.create(kv, card({ owner: "ada" }));
  await cards.create(kv, card({ owner: "adam" }));
  await cards.create(kv, card({ owner: "bea" }));
  const owners = await cards.list(kv, { index: "byOwner", prefix: "ad" });
  assert.deepEqual(owners.items.map((item) => item.value.owner), ["ada", "adam"]);
  await assert.rejects(patients.list(kv, { prefix: "north" }), TypeError);
  await assert.rejects(patients.list(kv, { ...query, value: "north/smith" }), TypeError);
});

Deno.test("a value with half a character (a lone surrogate) is no other value's: not found, not listed, not stored", async () => {
  // KV keeps a lone surrogate in a key as U+FFFD: before, find("a\uD800") gave the item of
  // "a\uFFFD", a listing of "t\uDC00" listed "t\uFFFD"'s items, and creating "a\uD800" was
  // refused as taken by "a\uFFFD" (or, first, took that value from it).
  using kv = await open();
  const people = collection("halves", {
    schema: v.object({ handle: v.string(), team: v.string() }),
    indexes: { byHandle: { key: "handle", unique: true }, byTeam: { key: "team" } },
  });
  const whole = await people.create(kv, { handle: "a\uFFFD", team: "t\uFFFD" });
  const half = (text: string) => `${text}${String.fromCharCode(0xd800)}`;
  assert.equal(await people.find(kv, "byHandle", half("a")), null);
  assert.equal((await people.find(kv, "byHandle", "a\uFFFD"))?.id, whole.id);
  assert.deepEqual((await people.list(kv, { index: "byTeam", value: half("t") })).items, []);
  assert.deepEqual((await people.snapshot(kv, { index: "byTeam", value: half("t") })).items, []);
  const other = collection("halves_other", { schema: v.object({ n: v.number() }) });
  await other.create(kv, { n: 1 }, { checks: [people.checkAbsent("byHandle", half("a"))] });
  for (const input of [{ handle: half("a"), team: "x" }, { handle: "b", team: half("t") }]) {
    await assert.rejects(
      people.create(kv, input),
      (error) => error instanceof ValidationError && error.status === 422,
    );
  }
  assert.equal((await people.find(kv, "byHandle", "a\uFFFD"))?.id, whole.id);
  assert.equal((await people.list(kv, { index: "byTeam", value: "t\uFFFD" })).items.length, 1);
});

Deno.test("list by prefix: a name at KV's limit is found by all of it; any text after a prefix", async () => {
  // The prefix was checked with U+10FFFF after it (4 bytes more) as if it were a value, and a
  // unique index's values as if each had an entry per item and a change log (it has one key): a
  // prefix within 3 bytes of the longest value KV holds listed nothing, a unique index's longest
  // ~50 bytes of values could be neither found nor listed, and a value with U+10FFFF after the
  // prefix was left out.
  using kv = await open();
  const people = collection("people", {
    schema: v.object({ name: v.string() }),
    indexes: { byName: { key: (p) => p.name }, byHandle: { key: (p) => p.name, unique: true } },
  });
  // The longest name whose keys fit KV, found by creating: KV's limit, not a number copied here.
  let [fits, tooLong] = [1, 4_000];
  while (tooLong - fits > 1) {
    const length = Math.floor((fits + tooLong) / 2);
    const made = await people.create(kv, { name: "n".repeat(length) }).then(
      () => true,
      () => false,
    );
    if (made) fits = length;
    else tooLong = length;
  }
  const longest = "n".repeat(fits);
  assert.equal((await people.find(kv, "byHandle", longest))?.value.name, longest);
  for (const index of ["byName", "byHandle"] as const) {
    const listed = async (prefix: string) =>
      (await people.list(kv, { index, prefix })).items
        .filter((item) => item.value.name === longest).length;
    assert.equal(await listed(longest), 1, `${index}: the whole name`);
    assert.equal(await listed(longest.slice(1)), 1, `${index}: all of it but a letter`);
    assert.equal(await listed(`${longest}n`), 0, `${index}: a letter more, no name that long fits`);
  }
  const odd = ["ab", "ab\u{10FFFF}", "ab\u{10FFFF}z", "ac", "a\uFFFD", "\u{10FFFF}"];
  for (const name of odd) await people.create(kv, { name });
  const names = async (prefix: string, reverse = false) =>
    (await people.list(kv, { index: "byName", prefix, reverse })).items
      .map((item) => item.value.name).filter((name) => odd.includes(name));
  assert.deepEqual(await names("ab"), ["ab", "ab\u{10FFFF}", "ab\u{10FFFF}z"]);
  assert.deepEqual(await names("ab", true), ["ab\u{10FFFF}z", "ab\u{10FFFF}", "ab"]);
  assert.deepEqual(await names("a"), ["ab", "ab\u{10FFFF}", "ab\u{10FFFF}z", "ac", "a\uFFFD"]);
  // A lone surrogate starts no text: nothing listed, not a failure - before, KV read it as U+FFFD
  // and listed "a\uFFFD".
  assert.deepEqual(await names(`a${String.fromCharCode(0xd800)}`), []);
  assert.deepEqual(await names(String.fromCharCode(0xdc00)), []);
  assert.deepEqual(await names("\u{10FFFF}"), ["\u{10FFFF}"]);
  // Every string value but one starting with U+10FFFF (a noncharacter): no text follows them all.
  assert.deepEqual(await names(""), ["ab", "ab\u{10FFFF}", "ab\u{10FFFF}z", "ac", "a\uFFFD"]);
});

Deno.test("also: what it adds counts toward KV's commit limits, beyond them a KvLimitError and nothing stored", async () => {
  using kv = await open();
  const big = "x".repeat(60_000);
  // Each value fits; together with the card they are over the commit's 800 KiB. Before, KV's
  // bare TypeError ("Total mutation size too large") at the commit.
  const tooMuch = (atomic: Deno.AtomicOperation) => {
    for (let i = 0; i < 14; i++) atomic.set(["notes", i], big);
    return atomic;
  };
  await assert.rejects(
    cards.create(kv, card(), { also: tooMuch }),
    (error) =>
      error instanceof KvLimitError && /KV commit too large: \d+ bytes of keys/.test(error.message),
  );
  await assert.rejects(
    cards.create(kv, card(), { also: (atomic) => atomic.enqueue("y".repeat(70_000)) }),
    KvLimitError,
  );
  await assert.rejects(
    cards.create(kv, card(), {
      also: (atomic) =>
        atomic.mutate(
          ...Array.from({ length: 1000 }, (_, i) => ({ type: "delete" as const, key: ["n", i] })),
        ),
    }),
    /KV commit too large: \d+ mutations/,
  );
  assert.equal((await Array.fromAsync(kv.list({ prefix: [] }))).length, 0, "nothing stored");
  // What fits still commits with the card.
  const kept = await cards.create(kv, card(), {
    also: (atomic) => atomic.set(["notes", "a"], big),
  });
  assert.equal((await kv.get(["notes", "a"])).value, big);
  assert.equal((await cards.get(kv, kept.id))?.id, kept.id);
});

Deno.test("also: a key under the collection's own name is refused, naming it, with nothing stored", async () => {
  using kv = await open();
  const kept = await cards.create(kv, card({ owner: "ada" }));
  const snapshot = async () =>
    (await Array.fromAsync(kv.list({ prefix: [] }))).map(({ key, value }) => ({ key, value }));
  const before = await snapshot();
  // Each would have left an index or a change log disagreeing with the items: a second holder of
  // a unique value, an item with no index entry, a counter moved under live pages. Before, all
  // committed with the write.
  const intrusions: [string, (atomic: Deno.AtomicOperation) => unknown][] = [
    ["set", (atomic) => atomic.set(["cards", "unique", "byOwner", "bob"], { id: kept.id })],
    ["delete", (atomic) => atomic.delete(["cards", "index", "byColumn", "a", kept.id])],
    ["check", (atomic) => atomic.check({ key: ["cards", "items", kept.id], versionstamp: null })],
    ["sum", (atomic) => atomic.sum(["cards", "log", "latest"], 1n)],
    ["mutate", (atomic) => atomic.mutate({ type: "delete", key: ["cards", "items", kept.id] })],
    ["enqueue", (atomic) => atomic.enqueue("m", { keysIfUndelivered: [["cards", "items", "x"]] })],
  ];
  for (const [what, also] of intrusions) {
    await assert.rejects(
      cards.create(kv, card(), { also }),
      (error) =>
        error instanceof TypeError &&
        /cards: also may not touch .*\[ "cards", /.test(error.message),
      what,
    );
    await assert.rejects(cards.update(kv, kept.id, { points: 2 }, { also }), TypeError, what);
    await assert.rejects(cards.delete(kv, kept.id, { also }), TypeError, what);
  }
  assert.deepEqual(await snapshot(), before, "nothing committed");
  // The product's own keys, and another collection's item as a check, still go with the write.
  const other = ["notes", "cards-touched"];
  await cards.update(kv, kept.id, { points: 3 }, {
    also: (atomic) => atomic.set(other, 1).check({ key: ["cardsX", "items"], versionstamp: null }),
  });
  assert.equal((await kv.get(other)).value, 1);
});
