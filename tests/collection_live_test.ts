/**
 * @module
 * A collection's change feeds and `changeStream`, in-process with a collection and routes of the
 * test's own: a move between index values seen as a delete in one view and a create in the other;
 * every change exactly once from any number, a `FeedGapError` (and over HTTP a `snapshot` event)
 * for a client too far behind, one whose changes expired, or one ahead of the log; resuming with
 * `Last-Event-ID`; values KV keeps apart (0, -0) each their own feed; connections cut mid-stream at random while changes are written, the client
 * still seeing each change exactly once; and the bounds on what a client controls (the number it
 * sends, the value it asks for, the streams a process holds, the feeds its values leave behind).
 */
import assert from "node:assert/strict";
import { parse } from "devalue";
import * as v from "valibot";
import { changeStream, collection, FeedGapError } from "../lib/data.ts";
import type { Change, Snapshot } from "../lib/runtime.ts";
import type { RouteModule } from "../lib/server/manifest.ts";
import { memoryApp, serveApp } from "./helpers/app.ts";
import { readEvents } from "./helpers/events.ts";
import { assertConsistent } from "./helpers/collections.ts";
import { heapAfterGc, heapGrowth } from "./helpers/heap.ts";

const Pin = v.object({ label: v.string(), wall: v.string(), at: v.date() });
type Pin = v.InferOutput<typeof Pin>;
const pins = collection("pins", {
  schema: Pin,
  indexes: { byWall: { key: "wall" } },
  live: { maxBacklog: 5, ringSize: 3 },
});
/**
 * The same, with a backlog longer than any test writes: a client reconnecting never needs a
 * snapshot, however far a busy machine lets it fall behind. (With the default, 200, a reconnect
 * that came 200 of the 300 changes late - a loaded CI box - got a snapshot, as it should, and the
 * test failed.)
 */
const posts = collection("posts", {
  schema: Pin,
  indexes: { byWall: { key: "wall" } },
  live: { maxBacklog: 1_000 },
});
const RULES = { byWall: { key: (pin: Record<string, unknown>) => pin.wall as string } };

const pin = (label: string, wall = "w1"): v.InferInput<typeof Pin> => ({
  label,
  wall,
  at: new Date("2026-11-26T10:00:00Z"),
});

/** Takes `n` items of an iterator within `ms`. */
async function take<T>(it: AsyncIterator<T>, n: number, ms = 3000): Promise<T[]> {
  const out: T[] = [];
  const deadline = AbortSignal.timeout(ms);
  while (out.length < n) {
    const next = await Promise.race([
      it.next(),
      new Promise<never>((_, reject) =>
        deadline.addEventListener("abort", () => reject(new Error(`${out.length} of ${n}`)))
      ),
    ]);
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

const ops = (changes: Change<Pin>[]) =>
  changes.map((c) => `${c.seq}:${c.op}:${c.value?.label ?? c.id}`);

Deno.test("views: a move between walls is a delete in one and a create in the other; the whole sees an update", async () => {
  using kv = await Deno.openKv(":memory:");
  const stop = new AbortController();
  const signal = stop.signal;
  const whole = pins.changes(kv).subscribe(0, { signal });
  const w1 = pins.changes(kv, { index: "byWall", value: "w1" }).subscribe(0, { signal });
  const w2 = pins.changes(kv, { index: "byWall", value: "w2" }).subscribe(0, { signal });
  const a = await pins.create(kv, pin("a"));
  await pins.update(kv, a.id, { wall: "w2" });
  await pins.update(kv, a.id, { label: "a2" });
  await pins.delete(kv, a.id);
  assert.deepEqual(ops(await take(whole, 4)), [
    "1:create:a",
    "2:update:a",
    "3:update:a2",
    `4:delete:${a.id}`,
  ]);
  assert.deepEqual(ops(await take(w1, 2)), ["1:create:a", `2:delete:${a.id}`]);
  assert.deepEqual(ops(await take(w2, 3)), ["1:create:a", "2:update:a2", `3:delete:${a.id}`]);
  const [created] = await take(pins.changes(kv).subscribe(0, { signal }), 1);
  assert.ok(created.value?.at instanceof Date, "values keep their types");
  assert.equal(created.versionstamp, a.versionstamp);
  stop.abort();
  await assertConsistent(kv, "pins", RULES);
});

Deno.test("views: values KV keeps apart (0 and -0) have feeds of their own", async () => {
  // A feed was named by String(value), "0" for both: a client's Number("-0") followed view 0's
  // feed (its changes, not its own), while KV indexes the two apart.
  const Score = v.object({ label: v.string(), score: v.number() });
  const scores = collection("scores", { schema: Score, indexes: { byScore: { key: "score" } } });
  using kv = await Deno.openKv(":memory:");
  const stop = new AbortController();
  const signal = stop.signal;
  const zero = scores.changes(kv, { index: "byScore", value: 0 }).subscribe(0, { signal });
  const negative = scores.changes(kv, { index: "byScore", value: -0 }).subscribe(0, { signal });
  await scores.create(kv, { label: "zero", score: 0 });
  await scores.create(kv, { label: "negative zero", score: -0 });
  const labels = (changes: Change<{ label: string }>[]) => changes.map((c) => c.value?.label);
  assert.deepEqual(labels(await take(zero, 1)), ["zero"]);
  assert.deepEqual(labels(await take(negative, 1)), ["negative zero"]);
  stop.abort();
});

Deno.test("changes: each exactly once from any number; too far behind, expired or ahead is a FeedGapError", async () => {
  using kv = await Deno.openKv(":memory:");
  for (let i = 1; i <= 12; i++) await pins.create(kv, pin(`p${i}`));
  const stop = new AbortController();
  const { signal } = stop;
  const feed = pins.changes(kv);
  // Within the backlog (5): the rest, in order.
  const near = feed.subscribe(8, { signal });
  assert.deepEqual(ops(await take(near, 4)).map((o) => o.split(":")[0]), ["9", "10", "11", "12"]);
  await near.return(undefined);
  // Further behind: a gap, never the newest five with the rest skipped.
  await assert.rejects(take(feed.subscribe(2, { signal }), 1), FeedGapError);
  // Ahead of the log (a store restored from a backup, a number made up).
  await assert.rejects(take(feed.subscribe(99, { signal }), 1), FeedGapError);
  // Expired: what KV's expiry would have deleted by now.
  await kv.delete(["pins", "log", "events", 10]);
  await assert.rejects(take(feed.subscribe(9, { signal }), 1), FeedGapError);
  // A subscriber already live sees new ones whatever happened behind it.
  const live = feed.subscribe(undefined, { signal });
  const next = take(live, 1);
  await new Promise((r) => setTimeout(r, 20));
  await pins.create(kv, pin("p13"));
  assert.deepEqual(ops(await next), ["13:create:p13"]);
  assert.equal(feed.subscribers, 1);
  stop.abort();
  assert.equal((await live.next()).done, true);
  assert.equal(feed.subscribers, 0);
});

/** An app whose `/walls/:wall/events` is one line: the wall's `changeStream`. */
function wallsApp(
  kv: Deno.Kv,
  { of = pins, maxClients }: { of?: typeof pins; maxClients?: number } = {},
) {
  const events: RouteModule = {
    handler: {
      GET: (req, ctx) =>
        changeStream(req, ctx, of, {
          index: "byWall",
          value: (ctx.params as { wall: string }).wall,
          limit: 50,
          maxClients,
          heartbeatMs: 60_000,
        }),
    },
  };
  return memoryApp({ routes: { "walls/[wall]/events.ts": events } }, { kv });
}

type Sent = { id?: string; event?: string; data: string };
const decoded = (event: Sent) => ({ ...event, body: parse(event.data) });

Deno.test("changeStream: a snapshot without a number, then changes numbered by the view, devalue payloads", async () => {
  using kv = await Deno.openKv(":memory:");
  await pins.create(kv, pin("before"));
  await pins.create(kv, pin("elsewhere", "w9"));
  await using server = serveApp(wallsApp(kv));
  await using stream = await readEvents(`${server.origin}/walls/w1/events`);
  assert.equal(stream.response.headers.get("content-type"), "text/event-stream; charset=utf-8");
  const [first] = await stream.waitFor(1);
  const snapshot = decoded(first).body as Snapshot<Pin>;
  assert.equal(first.event, "snapshot");
  assert.equal(first.id, "1");
  assert.deepEqual(snapshot.items.map((item) => item.value.label), ["before"]);
  assert.ok(snapshot.items[0].value.at instanceof Date);
  await pins.create(kv, pin("after"));
  const [, second] = await stream.waitFor(2);
  assert.equal(second.event, "change");
  assert.equal(second.id, "2");
  const change = decoded(second).body as Change<Pin>;
  assert.deepEqual([change.seq, change.op, change.value?.label], [2, "create", "after"]);
});

Deno.test("changeStream: Last-Event-ID resumes exactly; too far behind, junk or ahead starts from a snapshot", async () => {
  using kv = await Deno.openKv(":memory:");
  await using server = serveApp(wallsApp(kv));
  const url = `${server.origin}/walls/w1/events`;
  for (let i = 1; i <= 3; i++) await pins.create(kv, pin(`p${i}`));
  {
    await using stream = await readEvents(url + "?since=1");
    assert.deepEqual((await stream.waitFor(2)).map((e) => [e.event, e.id]), [["change", "2"], [
      "change",
      "3",
    ]]);
  }
  await pins.create(kv, pin("p4"));
  await pins.create(kv, pin("p5"));
  {
    // The header wins over the URL's number, as for an EventSource reconnecting.
    await using stream = await readEvents(url + "?since=0", { "Last-Event-ID": "3" });
    assert.deepEqual((await stream.waitFor(2)).map((e) => e.id), ["4", "5"]);
  }
  for (let i = 6; i <= 20; i++) await pins.create(kv, pin(`p${i}`));
  for (
    const [why, headers] of [
      ["behind", { "Last-Event-ID": "2" }],
      ["ahead", { "Last-Event-ID": "999999" }],
      ["junk", { "Last-Event-ID": "12abc" }],
      ["too long", { "Last-Event-ID": "9".repeat(400) }],
    ] as const
  ) {
    await using stream = await readEvents(url, headers);
    const [first] = await stream.waitFor(1);
    const latest = (await kv.get<number>(["pins", "logs", "byWall", "w1", "latest"])).value;
    assert.equal(first.event, "snapshot", why);
    assert.equal(first.id, String(latest), why);
    assert.equal((decoded(first).body as Snapshot<Pin>).items.length, 20, why);
    await pins.create(kv, pin(`${why}!`));
    const [, next] = await stream.waitFor(2);
    assert.equal(next.event, "change", why);
    await pins.delete(kv, (decoded(next).body as Change<Pin>).id);
    await stream.waitFor(3);
  }
});

Deno.test("changeStream: connections cut mid-stream at random while 300 changes are written: each seen once", async () => {
  using kv = await Deno.openKv(":memory:");
  await using server = serveApp(wallsApp(kv, { of: posts }));
  const url = `${server.origin}/walls/w1/events`;
  const seen: number[] = [];
  const view = new Map<string, string>();
  let last: string | undefined;
  const take = (events: Sent[]) => {
    for (const event of events) {
      const body = decoded(event).body;
      if (event.event === "snapshot") {
        // Only when it had no number: never because it fell behind (it reconnects at once).
        assert.equal(
          last,
          undefined,
          `a snapshot after a reconnect at ${last}: ${event.id} ${JSON.stringify(seen.slice(-3))}`,
        );
        for (const item of (body as Snapshot<Pin>).items) view.set(item.id, item.value.label);
      } else {
        const change = body as Change<Pin>;
        seen.push(change.seq);
        if (change.op === "delete") view.delete(change.id);
        else view.set(change.id, change.value!.label);
      }
      last = event.id;
    }
  };
  let writing = true;
  const writer = (async () => {
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) {
      if (i % 5 < 3 || ids.length === 0) ids.push((await posts.create(kv, pin(`n${i}`))).id);
      else if (i % 5 === 3) await posts.update(kv, ids[i % ids.length], { label: `u${i}` });
      else await posts.delete(kv, ids.splice(i % ids.length, 1)[0]);
      if (i % 7 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    writing = false;
  })();
  // A client that reconnects with the last id it got after each cut, as a browser does; the cut
  // comes at a random moment, mid-event too (a half-sent event is dropped, as EventSource drops it).
  let cuts = 0;
  while (writing && cuts < 2_000) {
    const stream = await readEvents(url, last === undefined ? {} : { "Last-Event-ID": last });
    await new Promise((r) => setTimeout(r, Math.random() * 15));
    await stream.close();
    cuts++;
    take(stream.events);
  }
  await writer;
  const latest = (await kv.get<number>(["posts", "logs", "byWall", "w1", "latest"])).value!;
  {
    await using stream = await readEvents(url, { "Last-Event-ID": last! });
    await stream.waitFor(latest - Number(last));
    take(stream.events);
  }
  assert.ok(cuts > 5, `${cuts} cuts`);
  assert.deepEqual(
    seen,
    Array.from({ length: seen.length }, (_, i) => latest - seen.length + i + 1),
  );
  assert.equal(seen.at(-1), latest, "each once, in order, to the last");
  const now = await posts.list(kv, { index: "byWall", value: "w1", limit: 1000 });
  assert.deepEqual(view, new Map(now.items.map((item) => [item.id, item.value.label])));
});

Deno.test("changeStream: what a client controls is bounded — the value it asks for, the streams a process holds", async () => {
  using kv = await Deno.openKv(":memory:");
  await using server = serveApp(wallsApp(kv, { maxClients: 3 }));
  const long = await fetch(`${server.origin}/walls/${"w".repeat(3000)}/events`, {
    headers: { Accept: "text/event-stream" },
  });
  assert.equal(long.status, 400);
  await long.body?.cancel();
  const open = await Promise.all(
    [1, 2, 3].map(() => readEvents(`${server.origin}/walls/w1/events`)),
  );
  await Promise.all(open.map((s) => s.waitFor(1)));
  const refused = await fetch(`${server.origin}/walls/w2/events`);
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get("retry-after"), "5");
  await refused.body?.cancel();
  await open[0].close();
  // Its place is given back once the server sees it gone.
  let again: Response | undefined;
  for (let i = 0; i < 100; i++) {
    again = await fetch(`${server.origin}/walls/w2/events`);
    if (again.status === 200) break;
    await again.body?.cancel();
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(again?.status, 200);
  await again?.body?.cancel();
  await Promise.all(open.slice(1).map((s) => s.close()));
});

Deno.test("changeStream: a client that leaves before it subscribes, or is refused, leaves no feed behind its value", async (t) => {
  // Attack 9: the view's feed was made (and kept, by the value the client chose, until its last
  // subscriber left) before the stream began. A stream refused with 503, or left before it
  // subscribed (during its snapshot, or before its first read), never had a subscriber: each
  // distinct value kept its feed, and its ~2 KB name, for the life of the process.
  using kv = await Deno.openKv(":memory:");
  const app = wallsApp(kv, { maxClients: 1 });
  const wall = (i: number) => `${i}`.padEnd(1_900, "w"); // about the longest value a key takes
  const N = 1_000;
  const events = (i: number, signal?: AbortSignal) =>
    app.request(`/walls/${wall(i)}/events`, { signal });

  await t.step("left before its first read", async () => {
    let before = 0;
    for (let i = -N; i < N; i++) {
      if (i === 0) before = await heapAfterGc(); // after as many of the same, to warm up
      const leaving = new AbortController();
      const res = await events(i, leaving.signal);
      assert.equal(res.status, 200);
      leaving.abort();
      await res.body?.cancel();
    }
    const grown = await heapGrowth(before, 1_000_000);
    assert.ok(grown < 1_000_000, `${N} clients gone left ${(grown / 1e6).toFixed(1)} MB behind`);
  });

  await t.step("refused: the collection's places are taken", async () => {
    const holding = new AbortController();
    const held = await events(-1, holding.signal);
    assert.equal(held.status, 200);
    const before = await heapAfterGc();
    for (let i = N; i < 2 * N; i++) {
      const res = await events(i);
      assert.equal(res.status, 503);
      await res.body?.cancel();
    }
    const grown = await heapGrowth(before, 1_000_000);
    holding.abort();
    await held.body?.cancel();
    assert.ok(grown < 1_000_000, `${N} refused clients left ${(grown / 1e6).toFixed(1)} MB behind`);
  });
});

Deno.test("changeStream: a stream that stays open keeps nothing of the changes it sent", async () => {
  // Attack 12: each wait for the next change raced the subscription's one `aborted` promise, and
  // every race left a reaction on it until the stream ended: some 380 bytes a change sent, per
  // stream (1.1 MB for these 3,000) - megabytes a stream on a busy view within one lifetime, and
  // without bound when streams have none.
  using kv = await Deno.openKv(":memory:");
  await using server = serveApp(wallsApp(kv));
  const res = await fetch(`${server.origin}/walls/w1/events?since=0`);
  assert.equal(res.status, 200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let received = 0;
  /** Reads until `n` changes have come, keeping none of them. */
  const until = async (n: number) => {
    while (received < n) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended after ${received} changes`);
      received += value.split("event: change\n").length - 1;
    }
  };
  // One change at a time, each received before the next: one wait of the stream's per change.
  const send = async (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      await pins.create(kv, pin(`p${i}`));
      await until(i + 1);
    }
  };
  const N = 3_000;
  await send(0, 500); // warm up
  const before = await heapAfterGc();
  await send(500, 500 + N);
  const grown = await heapGrowth(before, 600_000);
  await reader.cancel();
  assert.ok(grown < 600_000, `${N} changes sent left ${(grown / 1e3).toFixed(0)} KB behind`);
});
