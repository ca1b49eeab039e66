/**
 * @module
 * A live page's view of a collection (`lib/shared/live_view.ts`, what `useLiveCollection` keeps):
 * starting from any snapshot, taking the changes after it in order — with changes already in the
 * snapshot replayed, copies of any change (older or newer) arriving at any moment as an action's
 * answer or a second delivery, and a fresh snapshot in the middle — it ends as the collection
 * ended (fast-check). And the tombstones it keeps are bounded.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  applyChange,
  type Change,
  type Entity,
  type LiveView,
  MAX_GONE,
  viewOf,
  withSnapshot,
} from "../lib/shared/live_view.ts";

type Op = { kind: "create" | "update" | "delete"; item: number; value: number };

/** A history of changes to a few items, numbered and stamped as a collection's log would be. */
function historyOf(ops: Op[]) {
  const items = new Map<string, Entity<number>>();
  const changes: Change<number>[] = [];
  const states: Map<string, Entity<number>>[] = [new Map()];
  let stamp = 0;
  let made = 0;
  for (const op of ops) {
    const ids = [...items.keys()];
    const versionstamp = String(++stamp).padStart(20, "0");
    if (op.kind === "create" || ids.length === 0) {
      const id = `id${String(made++).padStart(4, "0")}`;
      items.set(id, { id, value: op.value, versionstamp });
      changes.push({ seq: changes.length + 1, op: "create", id, value: op.value, versionstamp });
    } else {
      const id = ids[op.item % ids.length];
      if (op.kind === "delete") {
        items.delete(id);
        changes.push({ seq: changes.length + 1, op: "delete", id, versionstamp });
      } else {
        items.set(id, { id, value: op.value, versionstamp });
        changes.push({ seq: changes.length + 1, op: "update", id, value: op.value, versionstamp });
      }
    }
    states.push(new Map(items));
  }
  return { changes, states };
}

/** The snapshot a server reads after change `seq`. */
function snapshotAt(states: Map<string, Entity<number>>[], changes: Change<number>[], seq: number) {
  return {
    seq,
    versionstamp: changes[seq - 1]?.versionstamp ?? "",
    items: [...states[seq].values()],
  };
}

const asMap = (view: LiveView<number>) => new Map([...view.items].map(([id, e]) => [id, e.value]));
const valuesOf = (items: Map<string, Entity<number>>) =>
  new Map([...items].map(([id, e]) => [id, e.value]));

Deno.test("property: any snapshot, replays, stray copies and a fresh snapshot end as the collection did", () => {
  const op = fc.record({
    kind: fc.constantFrom("create" as const, "update" as const, "delete" as const),
    item: fc.nat(),
    value: fc.integer(),
  });
  fc.assert(
    fc.property(
      fc.array(op, { minLength: 1, maxLength: 40 }),
      fc.nat(),
      fc.nat(),
      fc.nat(),
      fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 20 }),
      (ops, snapAt, replayFrom, resnapAt, strays) => {
        const { changes, states } = historyOf(ops);
        const n = changes.length;
        const k = snapAt % (n + 1); // the page's snapshot
        const j = replayFrom % (k + 1); // the stream starts at or before it: replays
        const m = k + (resnapAt % (n - k + 1)); // a fresh snapshot later on
        // What arrives: the changes from j on, a snapshot at m, the changes after m…
        const arriving: ({ snapshot: number } | Change<number>)[] = [
          ...changes.slice(j, m),
          { snapshot: m },
          ...changes.slice(m),
        ];
        // …and copies of any change at any moment (an action's answer, a second delivery).
        for (const [where, which] of strays) {
          arriving.splice(where % (arriving.length + 1), 0, changes[which % n]);
        }
        let view = viewOf(snapshotAt(states, changes, k));
        for (const next of arriving) {
          view = "snapshot" in next
            ? withSnapshot(view, snapshotAt(states, changes, next.snapshot))
            : applyChange(view, next);
        }
        assert.deepEqual(asMap(view), valuesOf(states[n]));
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("a change not newer than the view changes nothing, and keeps the same object", () => {
  const view = viewOf({
    seq: 1,
    versionstamp: "",
    items: [{ id: "a", value: 1, versionstamp: "02" }],
  });
  assert.equal(applyChange(view, { op: "update", id: "a", value: 0, versionstamp: "01" }), view);
  assert.equal(applyChange(view, { op: "update", id: "a", value: 1, versionstamp: "02" }), view);
  const deleted = applyChange(view, { op: "delete", id: "a", versionstamp: "03" });
  assert.equal(deleted.items.size, 0);
  assert.equal(
    applyChange(deleted, { op: "update", id: "a", value: 2, versionstamp: "02" }),
    deleted,
  );
  // Back in the view later (an index value changed back): newer than its leaving.
  const back = applyChange(deleted, { op: "create", id: "a", value: 3, versionstamp: "04" });
  assert.equal(back.items.get("a")?.value, 3);
});

Deno.test("the ids seen leaving are bounded: the newest MAX_GONE are kept", () => {
  let view = viewOf<number>({ seq: 0, versionstamp: "", items: [] });
  for (let i = 0; i < MAX_GONE + 50; i++) {
    view = applyChange(view, {
      op: "delete",
      id: `d${i}`,
      versionstamp: String(i).padStart(20, "0"),
    });
  }
  assert.equal(view.gone.size, MAX_GONE);
  assert.ok(!view.gone.has("d0"));
  assert.ok(view.gone.has(`d${MAX_GONE + 49}`));
});
