/**
 * @module
 * What a live feed keeps for each subscriber waiting on it - one per open event stream, thousands
 * at once (attack 12: an open stream held some 78 KB). A subscription is the feed's own generator,
 * made at the first `next` by an object of two fields; the generator around it (`yield*`) that did
 * that before held some 1.8 KB a waiting subscriber, against 1.3 KB now (an event stream on the
 * guestbook: 19.0 -> 18.1 KB of heap). And one never started makes no feed.
 */
import assert from "node:assert/strict";
import { append, feedOf, kvLog } from "../lib/data.ts";
import { heapAfterGc, heapGrowth } from "./helpers/heap.ts";

const N = 2_000;

Deno.test("2,000 subscribers waiting on one feed hold under 1.5 KB each; one returned unstarted subscribes to nothing", async () => {
  await using kv = await Deno.openKv(":memory:");
  const log = kvLog<{ id: number; text: string }>(["subscribers"]);
  await append(kv, log, (id) => ({ id, text: "first" }));
  const feed = feedOf(kv, log);
  const leaving = new AbortController();
  const subscribe = () => {
    const subscription = feed.subscribe(undefined, { signal: leaving.signal });
    return { subscription, next: subscription.next() };
  };
  // One of the same first, so that what is measured is the subscribers, not the code they run.
  const warm = subscribe();
  const before = await heapAfterGc();
  const waiting = Array.from({ length: N }, subscribe);
  const grown = await heapGrowth(before, 1_500 * N);
  assert.equal(feed.subscribers, N + 1);
  const each = grown / N;
  assert.ok(each < 1_500, `${each.toFixed(0)} bytes a waiting subscriber`);
  leaving.abort();
  for (const { next } of [warm, ...waiting]) assert.equal((await next).done, true);
  assert.equal(feed.subscribers, 0);
  // Returned before its first `next`: it never subscribed, and stays done.
  const unstarted = feed.subscribe();
  assert.deepEqual(await unstarted.return(undefined), { done: true, value: undefined });
  assert.equal((await unstarted.next()).done, true);
  assert.equal(feed.subscribers, 0);
});

Deno.test("a backlog KV cannot read is refused at the first next, not once the subscriber falls behind", async () => {
  await using kv = await Deno.openKv(":memory:");
  const log = kvLog<{ id: number }>(["backlog"]);
  const feed = feedOf(kv, log);
  for (let i = 0; i < 3; i++) await append(kv, log, (id) => ({ id }));
  // The limit of KV's read of what a subscriber missed: Infinity ("send all") was taken, and the
  // subscriber failed with KV's bare "Limit must be a positive integer" once it fell behind.
  for (const maxBacklog of [Infinity, 0, 2.5, NaN, 10_001]) {
    await assert.rejects(
      feed.subscribe(0, { maxBacklog }).next(),
      {
        name: "RangeError",
        message: /a maxBacklog of .* \(a whole number of items from 1 to 10000\)/,
      },
    );
  }
  assert.equal(feed.subscribers, 0);
  const leaving = new AbortController();
  const behind = feed.subscribe(0, { maxBacklog: 10_000, signal: leaving.signal });
  assert.deepEqual((await behind.next()).value, { id: 1 });
  leaving.abort();
  await behind.return(undefined);
});

Deno.test("a ring or poll a feed cannot work with is refused by feedOf", async () => {
  await using kv = await Deno.openKv(":memory:");
  const log = kvLog<{ id: number }>(["ringed"]);
  // A ring of 0 kept every item in memory (slice(-0)), one of Infinity failed KV's read of the
  // first item; a poll of 0 ms or Infinity ran without pause. As a collection's live options are.
  for (const ringSize of [0, 2.5, Infinity, 10_001]) {
    assert.throws(() => feedOf(kv, log, { ringSize }), /feedOf: a ringSize of .* from 1 to 10000/);
  }
  for (const pollIntervalMs of [0, -5, 1.5, Infinity, 3_600_001]) {
    assert.throws(
      () => feedOf(kv, log, { pollIntervalMs }),
      /feedOf: a pollIntervalMs of .* from 10 to an hour's/,
    );
  }
  feedOf(kv, log, { ringSize: 10_000, pollIntervalMs: 10 });
});
