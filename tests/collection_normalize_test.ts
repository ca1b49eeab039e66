/**
 * @module
 * An index's declared `normalize`: the one spelling of a string value, applied to the item's value
 * on every write and to every value asked for - `find`, `list` by value and by prefix,
 * `checkAbsent`, a live view's snapshot and changes - on a real store (a SQLite file, two handles
 * on it: two workers). Without it, `" Ada@Example.com"` looked at another key than the stored
 * `"ada@example.com"`: `find` found nothing, `checkAbsent` held, and a second account took the
 * same address.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { collection, ConflictError } from "../lib/data.ts";
import { twoWorkers } from "./helpers/kv.ts";

const fold = (text: string) => text.trim().toLowerCase();

const members = collection("members", {
  schema: v.object({ email: v.string(), team: v.string(), name: v.string() }),
  indexes: {
    byEmail: { key: "email", unique: true, normalize: fold },
    byTeam: { key: "team", normalize: fold },
    byName: { key: "name", normalize: fold },
  },
});
const invites = collection("invites", { schema: v.object({ email: v.string() }) });

Deno.test("normalize: find, checkAbsent and uniqueness meet a value however it was cased or spaced", async () => {
  await twoWorkers(async (one, other) => {
    const ada = await members.create(one, {
      email: "  Ada@Example.COM ",
      team: "Core",
      name: "Ada",
    });
    // The item keeps its field as written; the index keeps the one spelling.
    assert.equal(ada.value.email, "  Ada@Example.COM ");
    for (const asked of ["ada@example.com", "ADA@example.com", " ada@EXAMPLE.com\t"]) {
      assert.equal((await members.find(other, "byEmail", asked))?.id, ada.id, asked);
    }
    // Another account with the address, spelt otherwise, from another worker: refused.
    await assert.rejects(
      members.create(other, { email: "ada@example.com", team: "x", name: "Imp" }),
      (error) => error instanceof ConflictError && error.status === 409,
    );
    // An invite only while no member has the address, asked as a user typed it.
    const noMember = (email: string) => ({ checks: [members.checkAbsent("byEmail", email)] });
    await assert.rejects(
      invites.create(other, { email: "ADA@example.com " }, noMember("ADA@example.com ")),
      (error) => error instanceof ConflictError && error.reason === "exists",
    );
    await invites.create(other, { email: "bob@example.com" }, noMember(" Bob@Example.com"));
    // The member's own address, rewritten in another case: no conflict with itself, same key.
    const recased = await members.update(
      other,
      ada.id,
      { email: "ADA@EXAMPLE.COM" },
      noMember("ada@example.com"),
    );
    assert.equal(recased.value.email, "ADA@EXAMPLE.COM");
    assert.equal((await members.find(one, "byEmail", "ada@example.com"))?.id, ada.id);
    // Deleted: the address is free in every spelling.
    await members.delete(one, ada.id);
    assert.equal(await members.find(other, "byEmail", "Ada@example.com"), null);
    await invites.create(other, { email: "ada@example.com" }, noMember("ADA@example.com"));
  });
});

Deno.test("normalize: list by value and by prefix, a live view's snapshot and changes, as the index keeps it", async () => {
  await twoWorkers(async (one, other) => {
    const ada = await members.create(one, { email: "a@x", team: "Core", name: "Ada Lovelace" });
    const alan = await members.create(one, { email: "b@x", team: " core", name: "alan Turing" });
    await members.create(one, { email: "c@x", team: "Web", name: "Grace" });
    const ids = (page: { items: readonly { id: string }[] }) => page.items.map((item) => item.id);

    for (const value of ["core", "CORE ", " Core"]) {
      assert.deepEqual(ids(await members.list(other, { index: "byTeam", value })), [
        ada.id,
        alan.id,
      ], value);
    }
    for (const prefix of ["a", "A", " AL", "al"]) {
      const want = prefix.trim().toLowerCase() === "a" ? [ada.id, alan.id] : [alan.id];
      assert.deepEqual(ids(await members.list(other, { index: "byName", prefix })), want, prefix);
    }

    const snapshot = await members.snapshot(other, { index: "byTeam", value: "CORE" });
    assert.deepEqual(ids(snapshot), [ada.id, alan.id]);
    const feed = members.changes(other, { index: "byTeam", value: " Core " });
    const controller = new AbortController();
    const changes = feed.subscribe(snapshot.seq, { signal: controller.signal });
    const joined = await members.create(one, { email: "d@x", team: "CoRe", name: "Dot" });
    const next = await changes[Symbol.asyncIterator]().next();
    controller.abort();
    assert.equal(next.value?.op, "create");
    assert.equal(next.value?.id, joined.id);
  });
});

Deno.test("normalize: a declaration that is not a function, or one that gives other than a string, says so", async () => {
  assert.throws(
    () =>
      collection("bad", {
        schema: v.object({ email: v.string() }),
        // @ts-expect-error: not a function
        indexes: { byEmail: { key: "email", normalize: "lower" } },
      }),
    /index byEmail: normalize must be a function/,
  );
  const odd = collection("odd", {
    schema: v.object({ email: v.string() }),
    // @ts-expect-error: gives a number
    indexes: { byEmail: { key: "email", unique: true, normalize: (text: string) => text.length } },
  });
  using kv = await Deno.openKv(":memory:");
  await assert.rejects(odd.create(kv, { email: "a" }), /normalize must return a string/);
});

Deno.test("normalize: one that does not give its own answers back is refused where it is used, not a view that shows nothing", async () => {
  // Before, its values were normalised twice on a live view's way (the view, then its listing):
  // list by "core" found the item, the view's snapshot of "core" none.
  const tagged = collection("tagged", {
    schema: v.object({ team: v.string() }),
    indexes: { byTeam: { key: "team", normalize: (team) => `team:${team}` } },
  });
  using kv = await Deno.openKv(":memory:");
  await assert.rejects(tagged.create(kv, { team: "core" }), /normalize must give its own answers/);
  await assert.rejects(
    tagged.snapshot(kv, { index: "byTeam", value: "core" }),
    /normalize must give its own answers/,
  );
});

Deno.test("normalize declared once items were stored: an update or a delete of one never takes or frees another's entry", async () => {
  await twoWorkers(async (one, other) => {
    // Two accounts stored while the index matched values exactly: two entries, two spellings.
    const schema = v.object({ email: v.string(), plan: v.string() });
    const before = collection("accounts", {
      schema,
      indexes: { byEmail: { key: "email", unique: true } },
    });
    const upper = await before.create(one, { email: "Ada@x", plan: "free" });
    const lower = await before.create(one, { email: "ada@x", plan: "free" });
    // Then the index is given a normalize: both items' value is now "ada@x", lower's entry.
    const after = collection("accounts", {
      schema,
      indexes: { byEmail: { key: "email", unique: true, normalize: fold } },
    });
    // Before, the update wrote upper's item over lower's entry (find then gave upper), and the
    // delete removed that entry: the address was free while lower held it.
    await assert.rejects(
      after.update(other, upper.id, { plan: "paid" }),
      (error) => error instanceof ConflictError && error.reason === "taken",
    );
    assert.equal((await after.find(one, "byEmail", "ADA@x"))?.id, lower.id);
    assert.equal(await after.delete(other, upper.id) !== null, true);
    assert.equal((await after.find(one, "byEmail", "ada@x"))?.id, lower.id);
    await assert.rejects(
      after.create(other, { email: "ADA@X", plan: "free" }),
      (error) => error instanceof ConflictError && error.reason === "taken",
    );
    // The item's own entry still moves with it.
    const moved = await after.update(one, lower.id, { email: "Lovelace@x" });
    assert.equal((await after.find(other, "byEmail", "lovelace@x"))?.id, moved.id);
    assert.equal(await after.find(other, "byEmail", "ada@x"), null);
  });
});
