/**
 * @module
 * A rate limit past 7,000 calls a window - more than one KV value of call times holds - counted in
 * buckets, a sixtieth of the window each: exact at a bucket's width across handles on one file,
 * never more than `limit` in any `windowMs`, a refused call told when a slot frees. Before, such a
 * limit was a `RangeError` when made (and, before that, "Value too large" at its 7,281st call).
 */
import assert from "node:assert/strict";
import { limitCalls } from "../lib/kv/rate_limit.ts";
import { twoWorkers } from "./helpers/kv.ts";

const HOUR = 3_600_000;
/** A bucket of an hour's window: a minute. */
const WIDTH = HOUR / 60;
/** The start of a bucket, for a clock the tests set. */
const T0 = 30_000_000 * WIDTH;

Deno.test("7,001 calls an hour: each of the first 7,001 counted, the next refused until its oldest bucket leaves", async () => {
  using kv = await Deno.openKv(":memory:");
  const limit = { limit: 7_001, windowMs: HOUR };
  let t = T0;
  for (let i = 1; i <= 7_001; i++) {
    const counted = await limitCalls(kv, ["api", "c"], limit, () => t);
    assert.deepEqual(counted, { ok: true, remaining: 7_001 - i });
    t += 400; // 7,001 calls over 46.7 minutes
  }
  const refused = await limitCalls(kv, ["api", "c"], limit, () => t);
  // The first call's bucket [T0, T0 + a minute) is counted whole until a full window has passed
  // since its end: free at T0 + 61 minutes, a minute later than the exact log would say.
  assert.deepEqual(refused, {
    ok: false,
    retryAfterSeconds: Math.ceil((T0 + 61 * WIDTH - t) / 1000),
  });
  const freeAt = T0 + 61 * WIDTH;
  assert.equal((await limitCalls(kv, ["api", "c"], limit, () => freeAt - 1)).ok, false);
  // The first bucket held 150 calls (one every 400 ms for a minute): 150 slots free at once.
  assert.deepEqual(await limitCalls(kv, ["api", "c"], limit, () => freeAt), {
    ok: true,
    remaining: 149,
  });
  // Another key counts on its own.
  assert.equal((await limitCalls(kv, ["api", "d"], limit, () => t)).ok, true);
});

Deno.test("never more than the limit in any window: calls of a bucket still count a window after it", async () => {
  using kv = await Deno.openKv(":memory:");
  const limit = { limit: 8_000, windowMs: HOUR };
  // 8,000 calls at the very end of one bucket, as they would have counted themselves.
  const last = T0 + WIDTH - 1;
  await kv.set(["rate_limit", "api", "c", "buckets", T0 / WIDTH], 8_000);
  // Exactly a window after them (and after), a sliding log would let a call in; the bucket is whole,
  // so the calls of [T0, T0 + a minute) count until T0 + 61 minutes: never 8,001 in an hour.
  for (const t of [last + HOUR - 1, last + HOUR, T0 + 61 * WIDTH - 1]) {
    assert.equal((await limitCalls(kv, ["api", "c"], limit, () => t)).ok, false, `at ${t - T0}`);
  }
  assert.equal((await limitCalls(kv, ["api", "c"], limit, () => T0 + 61 * WIDTH)).ok, true);
});

Deno.test("two handles on one file racing at a bucketed limit: exactly the slots left get through", async () => {
  await twoWorkers(async (one, other) => {
    const limit = { limit: 10_000, windowMs: HOUR };
    const t = T0 + 30 * WIDTH;
    // 9,990 calls over the last half hour, as they would have counted themselves.
    await one.set(["rate_limit", "api", "c", "buckets", T0 / WIDTH + 5], 5_000);
    await one.set(["rate_limit", "api", "c", "buckets", T0 / WIDTH + 30], 4_990);
    const calls = [one, other].flatMap((kv) =>
      Array.from({ length: 20 }, () => limitCalls(kv, ["api", "c"], limit, () => t))
    );
    const results = await Promise.all(calls);
    assert.equal(results.filter((result) => result.ok).length, 10);
    const bucket = ["rate_limit", "api", "c", "buckets", T0 / WIDTH + 30];
    assert.equal((await one.get(bucket)).value, 5_000, "the 10 counted in the current bucket");
  });
});

Deno.test("a clock behind another worker's counts the buckets ahead of it: the limit holds, Retry-After from the newest", async () => {
  await twoWorkers(async (one, other) => {
    const limit = { limit: 8_000, windowMs: HOUR };
    const ahead = T0 + 2 * WIDTH; // a worker whose clock runs two minutes ahead
    const behind = T0;
    await one.set(["rate_limit", "api", "c", "buckets", ahead / WIDTH], 7_999);
    assert.deepEqual(await limitCalls(one, ["api", "c"], limit, () => ahead), {
      ok: true,
      remaining: 0,
    });
    // The slow clock's bucket is two before: its calls would have been 8,000 more in the hour.
    const refused = await limitCalls(other, ["api", "c"], limit, () => behind);
    // The bucket ahead leaves the slow clock's span when its current bucket is 61 past it, two
    // minutes after KV drops it: a window and a bucket after it was written.
    assert.deepEqual(refused, { ok: false, retryAfterSeconds: 61 * WIDTH / 1000 });
    // Racing: a call behind that counts while the bucket ahead moves on loses and reads again.
    await other.set(["rate_limit", "api", "c", "buckets", ahead / WIDTH], 7_000);
    const racing = [
      ...Array.from({ length: 600 }, () => limitCalls(one, ["api", "c"], limit, () => ahead)),
      ...Array.from({ length: 600 }, () => limitCalls(other, ["api", "c"], limit, () => behind)),
    ];
    const results = await Promise.all(racing);
    assert.equal(results.filter((result) => result.ok).length, 1_000);
  });
});

Deno.test("Retry-After is at most a window and a bucket, however far ahead the buckets counted", async () => {
  using kv = await Deno.openKv(":memory:");
  const limit = { limit: 8_000, windowMs: HOUR };
  // A window made an hour from a minute: the minute's buckets (a second wide) number 60 times
  // those of the hour's, all "ahead"; and a clock that leapt a day ahead before it came back.
  await kv.set(["rate_limit", "api", "longer", "buckets", T0 / 1_000], 8_000);
  await kv.set(["rate_limit", "api", "leapt", "buckets", (T0 + 24 * HOUR) / WIDTH], 8_000);
  for (const whom of ["longer", "leapt"]) {
    const refused = await limitCalls(kv, ["api", whom], limit, () => T0);
    // KV drops each a window and a bucket after it was written (not centuries, or a day, later).
    assert.deepEqual(refused, { ok: false, retryAfterSeconds: 61 * WIDTH / 1000 }, whom);
  }
});

Deno.test("a limit is any whole number from 1; 7,000 and below keep the exact log", async () => {
  using kv = await Deno.openKv(":memory:");
  for (const limit of [0, -1, 1.5, Infinity, 2 ** 53]) {
    await assert.rejects(
      limitCalls(kv, ["api", "c"], { limit, windowMs: HOUR }),
      /limitCalls: a limit of .* calls \(a whole number, 1 or more\)/,
    );
  }
  await limitCalls(kv, ["api", "logged"], { limit: 7_000, windowMs: HOUR }, () => T0);
  assert.deepEqual((await kv.get(["rate_limit", "api", "logged"])).value, [T0]);
  await limitCalls(kv, ["api", "bucketed"], { limit: 7_001, windowMs: HOUR }, () => T0);
  assert.equal((await kv.get(["rate_limit", "api", "bucketed", "buckets", T0 / WIDTH])).value, 1);
});
