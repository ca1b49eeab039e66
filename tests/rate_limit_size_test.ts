/**
 * @module
 * Attack 22: the KV rate limiter at the sizes a product may choose. Its log of a window's calls is
 * one KV value (64 KiB): a limit of 10,000 an hour counted 7,280 calls, then threw KV's "Value too
 * large" at every call of the key until the window moved on - a 500 each, in production only, under
 * load. A window of 10^16 ms threw KV's "expireIn is too large" at every call. Both are refused when
 * the limit is made (`rateLimit`, the auth settings) or asked (`limitCalls`), naming it.
 */
import assert from "node:assert/strict";
import { limitCalls, rateLimit } from "../lib/kv/rate_limit.ts";
import { resolveAuth } from "../lib/auth/settings.ts";

const HOUR = 60 * 60 * 1000;

Deno.test("attack 22: a limit past what one KV value holds is refused, not a failure at its 7,281st call", async () => {
  using kv = await Deno.openKv(":memory:");
  const tenThousandAnHour = { limit: 10_000, windowMs: HOUR };
  await assert.rejects(limitCalls(kv, ["api", "203.0.113.7"], tenThousandAnHour), {
    name: "RangeError",
    message: /limitCalls: a limit of 10000 calls \(a whole number from 1 to 7000/,
  });
  assert.throws(() => rateLimit({ name: "api", ...tenThousandAnHour }), /rateLimit\("api"\)/);
  assert.throws(
    () => resolveAuth({ signInPerClient: tenThousandAnHour }, undefined, "http:"),
    /auth\.signInPerClient: a limit of 10000/,
  );
  for (const windowMs of [1e16, 1.5, Infinity]) {
    await assert.rejects(limitCalls(kv, ["api", "w"], { limit: 5, windowMs }), RangeError);
  }
});

Deno.test("attack 22: the largest limit counts to its end in one KV value, one more is refused", async () => {
  using kv = await Deno.openKv(":memory:");
  const t = 1_800_000_000_000;
  const key = ["api", "203.0.113.7"];
  const most = { limit: 7_000, windowMs: HOUR };
  await assert.rejects(limitCalls(kv, key, { ...most, limit: 7_001 }, () => t), RangeError);
  // 6,999 calls in the window, as they would have logged themselves (each its own commit: slow).
  await kv.set(["rate_limit", ...key], Array.from({ length: 6_999 }, (_, i) => t - 6_999 + i));
  assert.deepEqual(await limitCalls(kv, key, most, () => t), { ok: true, remaining: 0 });
  const refused = await limitCalls(kv, key, most, () => t);
  assert.equal(refused.ok, false);
});

Deno.test("a key with a client's 10 KB part is counted, where KV takes no such key", async () => {
  using kv = await Deno.openKv(":memory:");
  // Before: KvLimitError at every call (a 500 each), for a product limiting by what a client sent.
  const long = (c: string) => ["reset", c.repeat(10_000)];
  const three = { limit: 3, windowMs: HOUR };
  const results = [];
  for (let i = 0; i < 4; i++) results.push((await limitCalls(kv, long("a"), three)).ok);
  assert.deepEqual(results, [true, true, true, false]);
  assert.deepEqual(await limitCalls(kv, long("b"), three), { ok: true, remaining: 2 });
  // Neither is under a key a short one could name.
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["rate_limit"] })), []);
});
