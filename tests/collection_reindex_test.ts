/**
 * @module
 * `collection.reindex(kv)` on real stores (a SQLite file, two handles on it: two workers): items
 * stored under one declaration, then an index given a `normalize`, added, or dropped, and the
 * entries made again as the declaration now spells them - `find` and `list` reach every item, no
 * stale entry is left, a second run writes nothing; a write of another worker during the run is
 * kept; a unique value two items now have is reported with both ids; a run stopped half-way goes
 * on; a run where most items collide or are refused lists the first hundred of each and counts
 * them all. Before it, an entry stayed under its old spelling until the item was written again, and an
 * index added to a collection had no entry for any item stored before it.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { collection } from "../lib/data.ts";
import { assertConsistent, entriesOf, type IndexRule } from "./helpers/collections.ts";
import { twoWorkers } from "./helpers/kv.ts";

const fold = (text: string) => text.trim().toLowerCase();
const schema = v.object({ email: v.string(), team: v.string(), plan: v.string() });
type Member = v.InferOutput<typeof schema>;

/** The declaration the product started with: values matched exactly as given, no plan index. */
const first = collection("members", {
  schema,
  indexes: { byEmail: { key: "email", unique: true }, byTeam: { key: "team" } },
});
/** The declaration it moved to: one spelling of emails and teams, and an index on the plan. */
const now = collection("members", {
  schema,
  indexes: {
    byEmail: { key: "email", unique: true, normalize: fold },
    byTeam: { key: "team", normalize: fold },
    byPlan: { key: "plan" },
  },
});
/** Stored with no index at all: the run's first commit is an item's. */
const bare = collection("members", { schema });
const RULES: Record<string, IndexRule> = {
  byEmail: { key: (m) => fold(m.email as string), unique: true },
  byTeam: { key: (m) => fold(m.team as string) },
  byPlan: { key: (m) => m.plan as string },
};

async function store(kv: Deno.Kv, members: Member[]) {
  const ids: string[] = [];
  for (const member of members) ids.push((await first.create(kv, member)).id);
  return ids;
}

const member = (i: number): Member => ({
  email: ` User${i}@Example.com`,
  team: i % 2 ? "Red " : "BLUE",
  plan: i % 3 ? "free" : "paid",
});

Deno.test("reindex: a normalize and an index declared once items were stored reach every item, and stale entries go", async () => {
  await twoWorkers(async (kv, other) => {
    const ids = await store(kv, Array.from({ length: 7 }, (_, i) => member(i)));
    // Before: the old spellings' entries only, and no entry in the new index.
    assert.equal(await now.find(kv, "byEmail", "user1@example.com"), null);
    assert.deepEqual((await now.list(kv, { index: "byPlan", value: "paid" })).items, []);

    const report = await now.reindex(kv, { batch: 3 });
    assert.deepEqual(report, {
      resumed: false,
      items: 7,
      rewritten: 7,
      removed: 14, // each item's old email and team entries
      collisions: [],
      collisionCount: 0,
      refused: [],
      refusedCount: 0,
    });
    for (const [i, id] of ids.entries()) {
      assert.equal((await now.find(other, "byEmail", `USER${i}@example.COM `))?.id, id);
    }
    const red = await now.list(other, { index: "byTeam", value: "red" });
    assert.deepEqual(red.items.map((item) => item.id), ids.filter((_, i) => i % 2));
    const paid = await now.list(other, { index: "byPlan", value: "paid" });
    assert.deepEqual(paid.items.map((item) => item.id), ids.filter((_, i) => i % 3 === 0));
    // Every entry is its item's, from its commit; the logs replay to the items; no place is kept.
    await assertConsistent(kv, "members", RULES);
    // What a listing or find gives updates without a conflict: its versionstamp is the item's.
    const found = await now.find(kv, "byEmail", "user2@example.com");
    await now.update(other, found!.id, { plan: "paid" }, { versionstamp: found!.versionstamp });

    // Again: nothing to do, nothing written, no change for live pages.
    const before = await entriesOf(kv, "members");
    const again = await now.reindex(other);
    assert.deepEqual(again, { ...report, items: 7, rewritten: 0, removed: 0 });
    assert.deepEqual(await entriesOf(kv, "members"), before);
  });
});

Deno.test("reindex: live views see an item enter the view of its new spelling and leave the old one's", async () => {
  await twoWorkers(async (kv, other) => {
    const [id] = await store(kv, [member(1)]);
    // A value another key function gave: the team as it was typed, still askable.
    const exact = collection("members", { schema, indexes: { byTeam: { key: "team" } } });
    const oldView = (await exact.snapshot(kv, { index: "byTeam", value: "Red " })).seq;
    const newView = (await now.snapshot(kv, { index: "byTeam", value: "red" })).seq;
    const whole = (await now.snapshot(kv)).seq;
    await now.reindex(other);
    const seen = async (view: object, since: number) => {
      const changes = now.changes(kv, view).subscribe(since);
      const { value } = await changes.next();
      await changes.return(undefined);
      return value!;
    };
    const entered = await seen({ index: "byTeam", value: "red" }, newView);
    assert.equal(entered.id, id);
    assert.deepEqual(entered.value, member(1));
    const item = await now.get(kv, id);
    assert.equal(entered.versionstamp, item!.versionstamp, "the item's new versionstamp");
    const left = exact.changes(kv, { index: "byTeam", value: "Red " }).subscribe(oldView);
    const { value: leaving } = await left.next();
    await left.return(undefined);
    assert.deepEqual([leaving.op, leaving.id], ["delete", id]);
    // The whole collection's view: the same item, at its new versionstamp.
    const updated = await seen({}, whole);
    assert.deepEqual([updated.op, updated.value], ["update", member(1)]);
  });
});

Deno.test("reindex: an index dropped from the declaration loses its entries and its change logs", async () => {
  await twoWorkers(async (kv) => {
    await store(kv, [member(1), member(2)]);
    const without = collection("members", {
      schema,
      indexes: { byEmail: { key: "email", unique: true } },
    });
    const report = await without.reindex(kv);
    assert.equal(report.removed, 2, "the two byTeam entries");
    assert.equal(report.rewritten, 0, "the byEmail entries were the items' own");
    await assertConsistent(kv, "members", {
      byEmail: { key: (m) => m.email as string, unique: true },
    });
    const logs = await Array.fromAsync(kv.list({ prefix: ["members", "logs"] }));
    assert.deepEqual(logs, [], "nothing would write or read them again");
  });
});

for (
  const [stored, when] of [[first, "deleting a stale entry"], [bare, "writing the item"]] as const
) {
  Deno.test(`reindex: another worker's update during the run (${when}) is kept, not written over`, async () => {
    await twoWorkers(async (kv, other) => {
      const ids: string[] = [];
      for (const i of [1, 2]) ids.push((await stored.create(kv, member(i))).id);
      // The first commit the run makes lets the other worker update that item first.
      let raced: string | undefined;
      const racing = new Proxy(kv, {
        get(target, property) {
          if (property === "atomic") {
            return () => {
              const op = target.atomic();
              const commit = op.commit.bind(op);
              op.commit = async () => {
                if (raced === undefined) {
                  raced = ids[0];
                  await now.update(other, ids[0], { plan: "gold", team: "Green" });
                }
                return await commit();
              };
              return op;
            };
          }
          const value = Reflect.get(target, property, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const report = await now.reindex(racing);
      assert.equal(raced, ids[0]);
      // Its update wrote every entry as `now` spells them: the run had nothing left to write there.
      assert.equal(report.rewritten, 1);
      const kept = await now.get(kv, ids[0]);
      assert.deepEqual(kept?.value, { ...member(1), plan: "gold", team: "Green" });
      assert.equal((await now.find(kv, "byEmail", "user1@example.com"))?.id, ids[0]);
      assert.deepEqual(
        (await now.list(kv, { index: "byPlan", value: "gold" })).items.map((item) => item.id),
        [ids[0]],
      );
      await assertConsistent(kv, "members", RULES);
    });
  });
}

Deno.test("reindex: a unique value two items now have is reported with both ids, and neither is dropped", async () => {
  await twoWorkers(async (kv, other) => {
    const [upper, lower, third] = await store(kv, [
      { ...member(1), email: "Ada@x" },
      { ...member(2), email: "ada@x " },
      member(3),
    ]);
    const report = await now.reindex(kv);
    assert.deepEqual(report.collisions, [{
      index: "byEmail",
      value: "ada@x",
      ids: [upper, lower],
    }]);
    assert.equal(report.rewritten, 3, "the second keeps its other entries");
    assert.equal((await now.find(other, "byEmail", "ADA@X"))?.id, upper);
    assert.ok(await now.get(other, lower), "both items are there");
    const blue = await now.list(other, { index: "byTeam", value: "blue" });
    assert.deepEqual(blue.items.map((item) => item.id), [lower]);
    assert.equal((await now.find(other, "byEmail", "user3@example.com"))?.id, third);
    // Reported again by the next run, which writes nothing; settled once one of them moves.
    const again = await now.reindex(other);
    assert.deepEqual([again.collisions, again.rewritten], [report.collisions, 0]);
    await now.update(kv, lower, { email: "lovelace@x" });
    assert.deepEqual((await now.reindex(other)).collisions, []);
    await assertConsistent(kv, "members", RULES);
  });
});

Deno.test("reindex: a run stopped half-way goes on where it was, and finishes", async () => {
  await twoWorkers(async (kv, other) => {
    await store(kv, Array.from({ length: 5 }, (_, i) => member(i)));
    const stop = new AbortController();
    const progress = (report: { items: number }) => {
      if (report.items > 0) stop.abort(new Error("killed"));
    };
    await assert.rejects(
      now.reindex(kv, { batch: 2, signal: stop.signal, progress }),
      /killed/,
    );
    assert.equal(await now.find(kv, "byEmail", "user4@example.com"), null, "not reached");
    const rest = await now.reindex(other, { batch: 2 });
    assert.deepEqual([rest.resumed, rest.items, rest.rewritten], [true, 3, 3]);
    assert.ok(await now.find(kv, "byEmail", "user4@example.com"));
    await assertConsistent(kv, "members", RULES);
    assert.equal((await kv.get(["members", "reindex"])).versionstamp, null, "no place kept");
    assert.equal((await now.reindex(kv)).resumed, false);
  });
});

Deno.test("reindex: a run that goes on from a stopped one counts the collisions that one found", async () => {
  await twoWorkers(async (kv, other) => {
    // One email under the new spelling: every item after the first collides with it.
    await store(
      kv,
      ["Ada@x", "ada@x", " ada@x", "ADA@x ", "ada@X"].map((email) => ({
        email,
        team: "red",
        plan: "free",
      })),
    );
    const stop = new AbortController();
    let found = 0;
    const progress = (report: { items: number; collisionCount: number }) => {
      if (report.items === 0) return;
      found = report.collisionCount;
      stop.abort(new Error("killed"));
    };
    await assert.rejects(now.reindex(kv, { batch: 2, signal: stop.signal, progress }), /killed/);
    assert.equal(found, 1, "the stopped run's first batch held a collision");
    const rest = await now.reindex(other, { batch: 2 });
    assert.deepEqual([rest.resumed, rest.items, rest.collisionCount], [true, 3, 4]);
    assert.equal(rest.collisions.length, 3, "it lists only its own");
  });
});

Deno.test("reindex: a run stopped under another declaration is not gone on from: the next starts over", async () => {
  // Stopped in the items' walk under `now`, which wrote lower-case teams for the first items;
  // then the team index is spelled in capitals, and the stopped place is no longer this one's.
  const shouting = collection("members", {
    schema,
    indexes: {
      byEmail: { key: "email", unique: true, normalize: fold },
      byTeam: { key: "team", normalize: (text: string) => text.trim().toUpperCase() },
      byPlan: { key: "plan" },
    },
  });
  await twoWorkers(async (kv, other) => {
    const ids = await store(kv, Array.from({ length: 6 }, (_, i) => member(i)));
    const stop = new AbortController();
    const progress = (report: { items: number }) => {
      if (report.items > 0) stop.abort(new Error("killed"));
    };
    await assert.rejects(now.reindex(kv, { batch: 2, signal: stop.signal, progress }), /killed/);
    const report = await shouting.reindex(other, { batch: 2 });
    assert.equal(report.resumed, false);
    // Went on from the items' walk, the lower-case entries of the first items stayed, and those
    // items were never given capitals: a listing of RED missed them.
    const red = await shouting.list(other, { index: "byTeam", value: "RED" });
    assert.deepEqual(red.items.map((item) => item.id), ids.filter((_, i) => i % 2));
    await assertConsistent(kv, "members", {
      ...RULES,
      byTeam: { key: (m) => (m.team as string).trim().toUpperCase() },
    });
  });
});

Deno.test("reindex: an item its index's key throws on is reported in refused, and the run goes on", async () => {
  const planned = v.object({ email: v.string(), plan: v.string() });
  const before = collection("plans", { schema: planned, indexes: { byPlan: { key: "plan" } } });
  // The key moved to the plans' codes: an item of a plan since retired ("gold") has none.
  const CODES: Record<string, { code: string }> = { free: { code: "F" }, paid: { code: "P" } };
  const after = collection("plans", {
    schema: planned,
    indexes: { byPlan: { key: (m) => CODES[m.plan].code } },
  });
  await twoWorkers(async (kv, other) => {
    const free = (await before.create(kv, { email: "a@x", plan: "free" })).id;
    const gold = (await before.create(kv, { email: "b@x", plan: "gold" })).id;
    const paid = (await before.create(kv, { email: "c@x", plan: "paid" })).id;
    const report = await after.reindex(kv, { batch: 1 });
    assert.deepEqual(report.refused.map(({ id }) => id), [gold]);
    assert.match(report.refused[0].message, /byPlan: Cannot read properties of undefined/);
    assert.deepEqual([report.items, report.rewritten, report.removed], [3, 2, 2]);
    for (const [code, id] of [["F", free], ["P", paid]]) {
      const listed = await after.list(other, { index: "byPlan", value: code });
      assert.deepEqual(listed.items.map((item) => item.id), [id]);
    }
    // Left as it was, its old entry with it, until the key (or the item) is mended.
    const old = await before.list(other, { index: "byPlan", value: "gold" });
    assert.deepEqual(old.items.map((item) => item.id), [gold]);
    assert.equal((await kv.get(["plans", "reindex"])).versionstamp, null, "the run finished");
  });
});

Deno.test("reindex: an item whose value in an index added is too long for a KV key is reported in refused, and the run goes on", async () => {
  const profile = v.object({ email: v.string(), bio: v.string() });
  const before = collection("profiles", { schema: profile });
  const byBio = collection("profiles", { schema: profile, indexes: { byBio: { key: "bio" } } });
  const bioUnique = collection("profiles", {
    schema: profile,
    indexes: { byBio: { key: "bio", unique: true } },
  });
  await twoWorkers(async (kv, other) => {
    const short = (await before.create(kv, { email: "a@x", bio: "short" })).id;
    // Stored before the index: a write now refuses it (too large to store), but it is there.
    const long = (await before.create(kv, { email: "b@x", bio: "x".repeat(5_000) })).id;
    for (const after of [byBio, bioUnique]) {
      const report = await after.reindex(kv, { batch: 1 });
      assert.deepEqual(report.refused.map(({ id }) => id), [long]);
      assert.match(report.refused[0].message, /byBio: KV key too large: \d+ bytes/);
      assert.deepEqual([report.items, report.rewritten], [2, 1]);
      assert.equal((await kv.get(["profiles", "reindex"])).versionstamp, null, "the run finished");
    }
    const listed = await byBio.list(other, { index: "byBio", value: "short" });
    assert.deepEqual(listed.items, []); // the index is unique now: its entries moved
    assert.equal((await bioUnique.find(other, "byBio", "short"))?.id, short);
  });
});

Deno.test("reindex: over a hundred collisions and refusals are counted, and only the first hundred listed", async () => {
  const planned = v.object({ email: v.string(), plan: v.string() });
  const before = collection("capped", {
    schema: planned,
    indexes: { byEmail: { key: "email", unique: true }, byPlan: { key: "plan" } },
  });
  // One spelling of emails now, and plans by code: "gold" has none, its key throws.
  const CODES: Record<string, string> = { free: "F" };
  const after = collection("capped", {
    schema: planned,
    indexes: {
      byEmail: { key: "email", unique: true, normalize: fold },
      byPlan: { key: (m) => CODES[m.plan].toString() },
    },
  });
  using kv = await Deno.openKv(":memory:");
  // 131 spellings of one address (130 collisions with the first), and 120 items of a retired plan.
  const holder = (await before.create(kv, { email: "ada@x", plan: "free" })).id;
  for (let i = 1; i <= 130; i++) {
    await before.create(kv, { email: `ada@x${" ".repeat(i)}`, plan: "free" });
  }
  for (let i = 0; i < 120; i++) await before.create(kv, { email: `gold${i}@x`, plan: "gold" });
  const report = await after.reindex(kv, { batch: 50 });
  assert.deepEqual(
    [report.collisionCount, report.collisions.length, report.refusedCount, report.refused.length],
    [130, 100, 120, 100],
  );
  assert.ok(report.collisions.every(({ ids }) => ids[0] === holder));
  assert.equal(report.items, 251);
});
