/**
 * @module
 * A collection written by two `deno serve --parallel` workers at once (one KV file), with the
 * fixture of `helpers/live_fixture.ts`: 200 concurrent moves of the same ten cards, through both
 * workers, each a read-modify-write that counts itself — none is lost (the counts add up to 200),
 * every index entry matches an item and every item its entries, the change logs have no gap; and
 * an event stream open on each worker gets every one of the 210 changes, once, in order.
 */
import assert from "node:assert/strict";
import type { Entity } from "../../lib/runtime.ts";
import { assertConsistent } from "../helpers/collections.ts";
import { type EventReader, readEvents } from "../helpers/events.ts";
import { tempStore } from "../helpers/kv.ts";
import { type Card, CARD_INDEXES, cardsApi, liveProject } from "../helpers/live_fixture.ts";
import { serveParallel } from "../helpers/parallel.ts";

Deno.test("two workers, 200 concurrent moves of the same cards: no lost update, indexes and logs consistent", async () => {
  const root = await liveProject();
  await using store = await tempStore();
  const KV_PATH = store.path;
  await using server = await serveParallel(root, { KV_PATH });
  // A connection per request, so that the kernel spreads them over both workers.
  using fresh = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });

  // An event stream on each worker, from the start.
  const streams: (EventReader & { worker: string | null })[] = [];
  // Which worker takes a connection is the kernel's choice (and a worker still starting takes none).
  for (let tries = 0; new Set(streams.map((s) => s.worker)).size < 2; tries++) {
    assert.ok(tries < 200, "no stream reached the second worker");
    if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 25));
    const stream = await readEvents(server.origin + "/cards/events?since=0", {}, fresh);
    const worker = stream.response.headers.get("x-worker");
    if (streams.some((s) => s.worker === worker)) await stream.close();
    else streams.push(Object.assign(stream, { worker }));
  }

  try {
    const made: Entity<Card>[] = [];
    for (let i = 0; i < 10; i++) {
      const { body } = await cardsApi<Entity<Card>>(server.origin, {
        op: "create",
        card: { title: `card ${i}`, column: "todo", moves: 0 },
      }, fresh);
      made.push(body);
    }
    const columns = ["todo", "doing", "done"];
    const moves = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        cardsApi<Entity<Card>>(server.origin, {
          op: "move",
          id: made[i % 10].id,
          column: columns[(i * 7) % 3],
        }, fresh)),
    );
    const workers = new Set(moves.map((move) => move.worker));
    assert.equal(workers.size, 2, "the moves went through both workers");

    // The store as the workers left it, read by a handle of the test's own.
    using kv = await Deno.openKv(KV_PATH);
    const items = await assertConsistent(kv, "cards", CARD_INDEXES);
    const counted = [...items.values()].reduce((n, item) => n + (item.value as Card).moves, 0);
    assert.equal(counted, 200, "every move counted: none lost");
    assert.equal((await kv.get<number>(["cards", "log", "latest"])).value, 210);

    for (const stream of streams) {
      const events = await stream.waitFor(210, 20_000);
      assert.deepEqual(
        events.map((event) => Number(event.id)),
        Array.from({ length: 210 }, (_, i) => i + 1),
        `worker ${stream.worker}: every change once, in order`,
      );
      assert.ok(events.every((event) => event.event === "change"));
    }
  } finally {
    await Promise.all(streams.map((stream) => stream.close()));
  }
});
