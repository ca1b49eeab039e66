/**
 * @module
 * A feed's settings are checked where they are given - `feedOf`'s ring and poll, a subscription's
 * backlog, a collection's `live.maxBacklog` - as their siblings are: a backlog of 0, a fraction or
 * Infinity made KV's list throw at a subscriber's first return, a ring of 0 kept every change.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { append, collection, feedOf, kvLog } from "../lib/data.ts";

const BAD_COUNTS = [0, -1, 2.5, Infinity, NaN, 10_001];

Deno.test("feedOf: a ring or poll out of bounds is a TypeError naming it", async () => {
  await using kv = await Deno.openKv(":memory:");
  const log = kvLog<{ id: number }>(["settings"]);
  for (const ringSize of BAD_COUNTS) {
    assert.throws(
      () => feedOf(kv, log, { ringSize }),
      /^TypeError: feedOf: ringSize must be a whole number of changes from 1 to 10000$/,
    );
  }
  for (const pollIntervalMs of [0, -5, 1.5, Infinity, 3_600_001]) {
    assert.throws(
      () => feedOf(kv, log, { pollIntervalMs }),
      /feedOf: pollIntervalMs must be whole milliseconds from 10 to an hour's/,
    );
  }
  feedOf(kv, log, { ringSize: 10_000, pollIntervalMs: 10 });
});

Deno.test("a subscription's maxBacklog out of bounds is a TypeError when it is asked for", async () => {
  await using kv = await Deno.openKv(":memory:");
  const log = kvLog<{ id: number }>(["backlog"]);
  const feed = feedOf(kv, log);
  for (const maxBacklog of BAD_COUNTS) {
    assert.throws(
      () => feed.subscribe(0, { maxBacklog }),
      /^TypeError: subscribe: maxBacklog must be a whole number of changes from 1 to 10000$/,
    );
  }
  // Within bounds: a subscriber behind by more than its backlog gets the newest it may.
  for (let i = 0; i < 3; i++) await append(kv, log, (id) => ({ id }));
  const leaving = new AbortController();
  const subscription = feed.subscribe(0, { maxBacklog: 1, signal: leaving.signal });
  assert.deepEqual((await subscription.next()).value, { id: 3 });
  leaving.abort();
  await subscription.return(undefined);
});

Deno.test("a collection's live.maxBacklog out of bounds is a TypeError at the declaration", () => {
  const schema = v.object({ a: v.string() });
  for (const maxBacklog of BAD_COUNTS) {
    assert.throws(
      () => collection("behind", { schema, live: { maxBacklog } }),
      /collection\("behind"\): live\.maxBacklog must be a whole number of changes from 1 to 10000/,
    );
  }
  collection("behind", { schema, live: { maxBacklog: 10_000 } });
});
