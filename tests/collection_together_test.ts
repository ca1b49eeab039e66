/**
 * @module
 * Writes to several collections in one commit (`commitAll`, `lib/kv/collection/together.ts`), on
 * a tool library's tools and loans: a loan and its tool's move are written both or neither - the
 * second refused by its state machine, a taken unique value, a changed versionstamp, its schema, a
 * check - two workers on one SQLite file lending one tool leave exactly one loan, read-modify-write
 * functions run again on a lost race with nothing lost (and give up, bounded, with a KvBusyError),
 * live feeds see every change, a failure at any KV call leaves the store before or after, a
 * commit over KV's limits is refused naming the limit, with nothing written, and a `creating`
 * write committed a second time is a `TypeError`.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  collection,
  commitAll,
  ConflictError,
  KvBusyError,
  TransitionError,
  ValidationError,
} from "../lib/data.ts";
import { httpError, isHttpError } from "../lib/mod.ts";
import type { Change } from "../lib/runtime.ts";
import { assertConsistent, entriesOf, failing, type IndexRule } from "./helpers/collections.ts";
import { twoWorkers } from "./helpers/kv.ts";

const tools = collection("tools", {
  schema: v.object({
    name: v.pipe(v.string(), v.minLength(1)),
    state: v.picklist(["available", "lent", "repair"]),
    loan: v.optional(v.string()),
    lends: v.optional(v.number(), 0),
  }),
  indexes: { byState: { key: "state" } },
  transitions: {
    state: { available: ["lent", "repair"], lent: ["available"], repair: ["available"] },
  },
});

const loans = collection("loans", {
  schema: v.object({
    tool: v.string(),
    member: v.pipe(v.string(), v.minLength(1, "Who borrows it?")),
    state: v.picklist(["open", "returned"]),
  }),
  indexes: {
    byMember: { key: "member" },
    openByTool: { key: (loan) => loan.state === "open" ? loan.tool : undefined, unique: true },
  },
});

const TOOL_RULES: Record<string, IndexRule> = { byState: { key: (tool) => tool.state as string } };
const LOAN_RULES: Record<string, IndexRule> = {
  byMember: { key: (loan) => loan.member as string },
  openByTool: {
    key: (loan) => loan.state === "open" ? loan.tool as string : undefined,
    unique: true,
  },
};

/** The docs' lend: a loan, and its tool moved to `lent` only from `available`, in one commit. */
function lend(kv: Deno.Kv, toolId: string, member: string) {
  const loan = loans.creating({ tool: toolId, member, state: "open" });
  return commitAll(kv, [
    loan,
    tools.updating(toolId, (tool) => {
      if (tool.state !== "available") throw httpError(409, `${tool.name} is not available`);
      return { state: "lent", loan: loan.id, lends: tool.lends + 1 };
    }),
  ]);
}

async function consistent(kv: Deno.Kv) {
  await assertConsistent(kv, "tools", TOOL_RULES);
  await assertConsistent(kv, "loans", LOAN_RULES);
}

Deno.test("commitAll: a loan and its tool's move in one commit, each as its collection writes it", async () => {
  using kv = await Deno.openKv(":memory:");
  const drill = await tools.create(kv, { name: "Drill", state: "available" });
  const [loan, lent] = await lend(kv, drill.id, "ada");
  assert.equal(loan.value.member, "ada");
  assert.equal(lent.value.state, "lent");
  assert.equal(lent.value.loan, loan.id, "the loan's id is known before the commit");
  assert.equal(loan.versionstamp, lent.versionstamp, "one commit");
  assert.deepEqual(await loans.get(kv, loan.id), loan);
  assert.deepEqual(await tools.get(kv, drill.id), lent);
  assert.deepEqual(await loans.find(kv, "openByTool", drill.id), loan);
  await consistent(kv);
  // Returning: the loan leaves the unique index, the tool is available again, in one commit;
  // a delete rides along too.
  const [returned, back, none] = await commitAll(kv, [
    loans.updating(loan.id, { state: "returned" }),
    tools.updating(drill.id, { state: "available", loan: undefined }),
    tools.deleting("not an id"),
  ]);
  assert.equal(returned.value.state, "returned");
  assert.equal(back.value.state, "available");
  assert.equal(none, null);
  assert.equal(await loans.find(kv, "openByTool", drill.id), null);
  const [gone] = await commitAll(kv, [loans.deleting(loan.id)]);
  assert.equal(typeof gone, "string");
  assert.deepEqual(await commitAll(kv, []), []);
  await consistent(kv);
});

Deno.test("commitAll: both or neither - the second refused by a transition, a taken value, a versionstamp, the schema, a check", async () => {
  using kv = await Deno.openKv(":memory:");
  const saw = await tools.create(kv, { name: "Saw", state: "repair" });
  const drill = await tools.create(kv, { name: "Drill", state: "available" });
  const [open] = await commitAll(kv, [
    loans.creating({ tool: drill.id, member: "bo", state: "open" }),
  ]);
  const before = [...await entriesOf(kv, "tools"), ...await entriesOf(kv, "loans")];
  const refusals: [string, () => Promise<unknown>, (error: unknown) => boolean][] = [
    [
      "transition",
      () =>
        commitAll(kv, [
          loans.creating({ tool: saw.id, member: "ada", state: "open" }),
          tools.updating(saw.id, { state: "lent" }), // repair -> lent: not a move
        ]),
      (error) => error instanceof TransitionError && error.collection === "tools",
    ],
    [
      "taken",
      () =>
        commitAll(kv, [
          tools.updating(drill.id, { state: "lent" }),
          loans.creating({ tool: drill.id, member: "ada", state: "open" }), // bo's is open
        ]),
      (error) =>
        error instanceof ConflictError && error.reason === "taken" && error.index === "openByTool",
    ],
    [
      "taken within the commit",
      () =>
        commitAll(kv, [
          loans.creating({ tool: saw.id, member: "ada", state: "open" }),
          loans.creating({ tool: saw.id, member: "cy", state: "open" }),
        ]),
      (error) =>
        error instanceof ConflictError && error.reason === "taken" && error.index === "openByTool",
    ],
    [
      "changed",
      () =>
        commitAll(kv, [
          loans.creating({ tool: saw.id, member: "ada", state: "open" }),
          tools.updating(saw.id, { state: "available" }, { versionstamp: drill.versionstamp }),
        ]),
      (error) => error instanceof ConflictError && error.reason === "changed",
    ],
    [
      "schema",
      () =>
        commitAll(kv, [
          tools.updating(saw.id, { state: "available" }),
          loans.creating({ tool: saw.id, member: "", state: "open" }),
        ]),
      (error) => error instanceof ValidationError && error.fields.member?.[0] === "Who borrows it?",
    ],
    [
      "checked",
      () =>
        commitAll(kv, [
          tools.updating(saw.id, { state: "available" }),
          loans.creating({ tool: saw.id, member: "ada", state: "open" }, {
            checks: [loans.check({ id: open.id, versionstamp: saw.versionstamp })],
          }),
        ]),
      (error) => error instanceof ConflictError && error.reason === "checked",
    ],
    [
      "a function's refusal",
      () => lend(kv, drill.id, "ada").then(() => lend(kv, drill.id, "cy")),
      (error) => isHttpError(error) && error.status === 409,
    ],
    [
      "missing",
      () =>
        commitAll(kv, [
          loans.creating({ tool: saw.id, member: "ada", state: "open" }),
          tools.updating(loans.creating({ tool: "x", member: "x", state: "open" }).id, {}),
        ]),
      (error) => isHttpError(error) && error.status === 404,
    ],
  ];
  for (const [what, write, expected] of refusals) {
    await assert.rejects(write(), expected, what);
    if (what === "a function's refusal") continue; // its first lend committed, as it should
    assert.deepEqual(
      [...await entriesOf(kv, "tools"), ...await entriesOf(kv, "loans")],
      before,
      `${what}: nothing written`,
    );
  }
  await assert.rejects(
    commitAll(kv, [tools.updating(saw.id, { name: "A" }), tools.deleting(saw.id)]),
    /tools: item \w+ is written twice in one commit/,
  );
  await assert.rejects(
    commitAll(kv, [{ collection: "tools", id: saw.id }]),
    /commitAll takes writes made by a collection's creating, updating or deleting/,
  );
  await consistent(kv);
});

Deno.test("commitAll: two workers lending one tool at once leave exactly one loan; functions lose no increment", async () => {
  await twoWorkers(async (one, other) => {
    const drill = await tools.create(one, { name: "Drill", state: "available" });
    const lends = (kv: Deno.Kv, who: string) =>
      Array.from({ length: 10 }, (_, i) => lend(kv, drill.id, `${who}${i}`));
    const results = await Promise.allSettled([...lends(one, "a"), ...lends(other, "b")]);
    const lent = results.filter((r) => r.status === "fulfilled");
    assert.equal(lent.length, 1, "exactly one lend passes");
    for (const result of results) {
      // The tool's state refuses, or (a lend that read the tool just before) the open loan's
      // unique value: both 409s, and nothing of the refused lend is written.
      if (result.status === "rejected") {
        assert.match(String(result.reason), /Drill is not available|openByTool already/);
      }
    }
    const all = await loans.list(one);
    assert.equal(all.items.length, 1, "exactly one loan");
    const tool = await tools.get(other, drill.id);
    assert.equal(tool?.value.loan, all.items[0].id);
    assert.equal(tool?.value.lends, 1);

    // Each commit adds a loan and counts it on the tool, returning it at once: every function
    // ran again on the tool as it then was, so the count is the number of loans made.
    const hammer = await tools.create(one, { name: "Hammer", state: "available" });
    const count = (kv: Deno.Kv, who: string) =>
      Promise.all(Array.from({ length: 15 }, (_, i) =>
        commitAll(kv, [
          loans.creating({ tool: hammer.id, member: `${who}${i}`, state: "returned" }),
          tools.updating(hammer.id, (tool) => ({ lends: tool.lends + 1 })),
        ])));
    await Promise.all([count(one, "a"), count(other, "b")]);
    assert.equal((await tools.get(one, hammer.id))?.value.lends, 30);
    assert.equal((await loans.list(one, { limit: 100 })).items.length, 31);
    await consistent(one);
  });
});

/** The first `n` changes a feed gives, or an error after 5 s. */
async function take<T>(feed: AsyncGenerator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  const deadline = AbortSignal.timeout(5_000);
  while (out.length < n) {
    const next = await Promise.race([
      feed.next(),
      new Promise<never>((_, reject) =>
        deadline.addEventListener("abort", () => reject(new Error(`${out.length} of ${n}`)))
      ),
    ]);
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

Deno.test("commitAll: live feeds see every change of the commit, numbered one after the other in a shared view", async () => {
  using kv = await Deno.openKv(":memory:");
  const stop = new AbortController();
  const { signal } = stop;
  const drill = await tools.create(kv, { name: "Drill", state: "available" });
  const toolFeed = tools.changes(kv).subscribe(1, { signal });
  const lentFeed = tools.changes(kv, { index: "byState", value: "lent" }).subscribe(0, { signal });
  const loanFeed = loans.changes(kv).subscribe(0, { signal });
  const adaFeed = loans.changes(kv, { index: "byMember", value: "ada" }).subscribe(0, { signal });
  const [loan, lent] = await lend(kv, drill.id, "ada");
  // Two loans of one member in one commit: their views number them 2 and 3.
  const [second, third] = await commitAll(kv, [
    loans.creating({ tool: "t2", member: "ada", state: "returned" }),
    loans.creating({ tool: "t3", member: "ada", state: "returned" }),
  ]);
  const show = (changes: Change<{ state: string }>[]) =>
    changes.map(({ seq, op, id, versionstamp }) => ({ seq, op, id, versionstamp }));
  assert.deepEqual(show(await take(toolFeed, 1)), [
    { seq: 2, op: "update", id: drill.id, versionstamp: lent.versionstamp },
  ]);
  assert.deepEqual(show(await take(lentFeed, 1)), [
    { seq: 1, op: "create", id: drill.id, versionstamp: lent.versionstamp },
  ]);
  const expected = [
    { seq: 1, op: "create", id: loan.id, versionstamp: loan.versionstamp },
    { seq: 2, op: "create", id: second.id, versionstamp: second.versionstamp },
    { seq: 3, op: "create", id: third.id, versionstamp: second.versionstamp },
  ];
  assert.deepEqual(show(await take(loanFeed, 3)), expected);
  assert.deepEqual(show(await take(adaFeed, 3)), expected);
  stop.abort();
  await consistent(kv);
});

Deno.test("commitAll: a commit over KV's limits is a 422 naming the limit, with nothing written", async () => {
  using kv = await Deno.openKv(":memory:");
  const drill = await tools.create(kv, { name: "Drill", state: "available" });
  const before = [...await entriesOf(kv, "tools"), ...await entriesOf(kv, "loans")];
  // Each open loan checks its item and its unique value: 60 are 120 checks, KV allows 100.
  const many = Array.from(
    { length: 60 },
    (_, i) => loans.creating({ tool: `t${i}`, member: "ada", state: "open" }),
  );
  await assert.rejects(
    commitAll(kv, [tools.updating(drill.id, { state: "lent" }), ...many]),
    (error) =>
      error instanceof ValidationError && error.status === 422 &&
      /^Too large to store: KV commit too large: \d+ checks \(max 100\)/.test(error.message) &&
      error.collection === "tools, loans",
  );
  // Items that each fit, over the commit's 800 KiB of keys and values together.
  const big = "x".repeat(60_000);
  const heavy = Array.from(
    { length: 15 },
    (_, i) => tools.creating({ name: `${big}${i}`, state: "available" }),
  );
  await assert.rejects(
    commitAll(kv, heavy),
    /Too large to store: KV commit too large: \d+ bytes of keys and values/,
  );
  assert.deepEqual(
    [...await entriesOf(kv, "tools"), ...await entriesOf(kv, "loans")],
    before,
    "nothing written",
  );
  // What fits commits.
  const fits = await commitAll(kv, many.slice(0, 40));
  assert.equal(fits.length, 40);
  await consistent(kv);
});

Deno.test("commitAll: also adds the product's keys to the commit, never a written collection's", async () => {
  using kv = await Deno.openKv(":memory:");
  const drill = await tools.create(kv, { name: "Drill", state: "available" });
  await assert.rejects(
    commitAll(kv, [
      tools.updating(drill.id, { state: "lent" }, {
        also: (atomic) => atomic.delete(["loans", "log", "latest"]),
      }),
      loans.creating({ tool: drill.id, member: "ada", state: "open" }),
    ]),
    /loans: also may not touch the collection's own keys/,
  );
  const [loan] = await commitAll(kv, [
    loans.creating({ tool: drill.id, member: "ada", state: "open" }, {
      also: (atomic, id) => atomic.set(["reminders", id], "due in a week"),
    }),
    tools.updating(drill.id, { state: "lent" }),
  ]);
  assert.equal((await kv.get(["reminders", loan.id])).value, "due in a week");
  await consistent(kv);
});

Deno.test("commitAll: a failure at any KV call leaves the store as before the commit or after it, never between", async () => {
  const setUp = async (kv: Deno.Kv) => {
    const drill = await tools.create(kv, { name: "Drill", state: "available" });
    const [loan] = await commitAll(kv, [
      loans.creating({ tool: "t", member: "bo", state: "open" }),
    ]);
    return { drill, loan };
  };
  // A create, an update and a delete across two collections, with unique values left and taken.
  const write = (kv: Deno.Kv, { drill, loan }: Awaited<ReturnType<typeof setUp>>) =>
    commitAll(kv, [
      loans.deleting(loan.id),
      loans.creating({ tool: "t", member: "ada", state: "open" }),
      tools.updating(drill.id, (tool) => ({ state: "lent", lends: tool.lends + 1 })),
    ]);
  const stored = async (kv: Deno.Kv) => [
    ...await entriesOf(kv, "tools"),
    ...await entriesOf(kv, "loans"),
  ];
  using probe = await Deno.openKv(":memory:");
  const counted = failing(probe, 0);
  await write(counted.kv, await setUp(probe));
  const calls = counted.calls();
  assert.ok(calls >= 3, `${calls} calls`);
  for (let failAt = 1; failAt <= calls; failAt++) {
    using kv = await Deno.openKv(":memory:");
    const made = await setUp(kv);
    const before = await stored(kv);
    const error = await write(failing(kv, failAt).kv, made).then(() => null, (e) => e);
    assert.match(String(error), /injected/, `call ${failAt}`);
    assert.deepEqual(await stored(kv), before, `call ${failAt}`);
    await write(kv, made);
    assert.equal((await tools.get(kv, made.drill.id))?.value.lends, 1);
    await consistent(kv);
  }
});

Deno.test("commitAll: a unique value one item leaves and another takes in the same commit passes to the taker", async () => {
  const addresses = collection("addresses", {
    schema: v.object({ member: v.string(), street: v.string(), primary: v.boolean() }),
    indexes: { primaryOf: { key: (a) => a.primary ? a.member : undefined, unique: true } },
  });
  const rules: Record<string, IndexRule> = {
    primaryOf: { key: (a) => a.primary ? a.member as string : undefined, unique: true },
  };
  using kv = await Deno.openKv(":memory:");
  const [home, work] = await commitAll(kv, [
    addresses.creating({ member: "ada", street: "Home St", primary: true }),
    addresses.creating({ member: "ada", street: "Work St", primary: false }),
  ]);
  // Alone, either write is refused or leaves ada with no primary address for a moment.
  await assert.rejects(addresses.update(kv, work.id, { primary: true }), ConflictError);
  // In either order in one commit, the value moves.
  await commitAll(kv, [
    addresses.updating(work.id, { primary: true }),
    addresses.updating(home.id, { primary: false }),
  ]);
  assert.equal((await addresses.find(kv, "primaryOf", "ada"))?.id, work.id);
  await assertConsistent(kv, "addresses", rules);
  await commitAll(kv, [
    addresses.updating(work.id, { primary: false }),
    addresses.updating(home.id, { primary: true }),
  ]);
  assert.equal((await addresses.find(kv, "primaryOf", "ada"))?.id, home.id);
  await assertConsistent(kv, "addresses", rules);
  // A third item taking the value the holder does not leave is still refused.
  await assert.rejects(
    commitAll(kv, [
      addresses.updating(work.id, { primary: true }),
      addresses.creating({ member: "ada", street: "Third St", primary: false }),
    ]),
    (error) => error instanceof ConflictError && error.reason === "taken",
  );
});

Deno.test("commitAll: a write that leaves its item as it was still holds the commit to the item as read", async () => {
  await twoWorkers(async (one, other) => {
    const drill = await tools.create(one, { name: "Drill", state: "lent" });
    let runs = 0;
    // Already lent: the function lets the tool be. Another worker renames it (a repair, in the
    // product) before the commit: the loan must not commit on the tool as first read.
    const [loan, tool] = await commitAll(one, [
      loans.creating({ tool: drill.id, member: "ada", state: "open" }),
      tools.updating(drill.id, async (tool) => {
        if (++runs === 1) await tools.update(other, drill.id, { name: "Drill (repaired)" });
        return { state: tool.state };
      }),
    ]);
    assert.equal(runs, 2, "the function ran again on the tool as it then was");
    assert.equal(tool.value.name, "Drill (repaired)");
    assert.equal(tool.versionstamp, (await tools.get(one, drill.id))?.versionstamp);
    assert.ok(await loans.get(one, loan.id));
  });
});

Deno.test("commitAll: a creating write is committed once - again after a refusal, a TypeError after a success", async () => {
  using kv = await Deno.openKv(":memory:");
  const drill = await tools.create(kv, { name: "Drill", state: "repair" });
  const loan = loans.creating({ tool: drill.id, member: "ada", state: "open" });
  const move = () => tools.updating(drill.id, { state: "lent", loan: loan.id });
  await assert.rejects(commitAll(kv, [loan, move()]), TransitionError);
  await tools.update(kv, drill.id, { state: "available" });
  const [made] = await commitAll(kv, [loan, move()]);
  assert.equal(made.id, loan.id, "refused, nothing was written: committed again, it is made");

  const once = (error: unknown, id: string) =>
    error instanceof TypeError &&
    error.message === `loans: this creating(...) write was committed already (item ${id}): ` +
        "a creating write is committed once; describe a new one for another item";
  const rename = tools.updating(drill.id, { name: "Drill 2" });
  await assert.rejects(commitAll(kv, [rename, loan]), (error) => once(error, loan.id));
  const twice = loans.creating({ tool: "saw", member: "cy", state: "returned" });
  await assert.rejects(commitAll(kv, [twice, twice]), /^TypeError: loans: item .* written twice/);
  assert.equal((await tools.get(kv, drill.id))?.value.name, "Drill", "nothing written");
  // Two commits of one at once: one makes the item, the other is told.
  const saw = loans.creating({ tool: "saw", member: "bob", state: "open" });
  const both = await Promise.allSettled([commitAll(kv, [saw]), commitAll(kv, [saw])]);
  assert.equal(both[0].status, "fulfilled");
  assert.ok(both[1].status === "rejected" && once(both[1].reason, saw.id), String(both[1]));
  assert.equal((await loans.list(kv)).items.length, 2, "one loan each");
  await consistent(kv);
});

Deno.test("commitAll: a commit that loses every race gives up after bounded tries with a KvBusyError, nothing written", async () => {
  await twoWorkers(async (one, other) => {
    const drill = await tools.create(one, { name: "Drill", state: "available" });
    let runs = 0;
    // Another worker writes the tool between every read and its commit.
    const busy = commitAll(one, [
      loans.creating({ tool: drill.id, member: "ada", state: "open" }),
      tools.updating(drill.id, async (tool) => {
        runs++;
        await tools.update(other, drill.id, (t) => ({ lends: t.lends + 1 }));
        return { state: "lent", lends: tool.lends };
      }),
    ]);
    await assert.rejects(
      busy,
      (error) =>
        error instanceof KvBusyError &&
        error.message.startsWith("loans: create, tools: update: not committed"),
    );
    assert.equal(runs, 20, "20 tries, each reading again");
    assert.equal((await loans.list(one)).items.length, 0, "no loan");
    assert.equal((await tools.get(one, drill.id))?.value.state, "available");
  });
});

Deno.test("attack 21: a write whose function never settles holds its collections' later writes in this isolate for a while, not for good", async () => {
  using kv = await Deno.openKv(":memory:");
  const drill = await tools.create(kv, { name: "Drill", state: "available" });
  // The product's function awaits what never comes (a fetch with no timeout, say). The later
  // writes wait its turn (2 s), then go: "for good" is what the bound (30 s, room for a loaded
  // machine) tells apart.
  let release!: () => void;
  const never = new Promise<void>((resolve) => release = resolve);
  const stuck = commitAll(kv, [
    loans.creating({ tool: drill.id, member: "ada", state: "open" }),
    tools.updating(drill.id, async () => (await never, { state: "lent" })),
  ]);
  const later = Promise.all([
    tools.create(kv, { name: "Saw", state: "available" }),
    loans.create(kv, { tool: "saw", member: "bea", state: "open" }),
  ]);
  let timer!: ReturnType<typeof setTimeout>;
  const given = await Promise.race([
    later.then(() => "written"),
    new Promise((resolve) => timer = setTimeout(resolve, 30_000, "still waiting")),
  ]);
  clearTimeout(timer);
  release();
  await stuck;
  assert.equal(given, "written");
  await consistent(kv);
});
