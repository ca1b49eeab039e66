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
