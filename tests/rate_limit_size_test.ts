/**
 * @module
 * Attack 22: the KV rate limiter at the sizes a product may choose. Its log of a window's calls is
 * one KV value (64 KiB): a limit of 10,000 an hour counted 7,280 calls, then threw KV's "Value too
 * large" at every call of the key until the window moved on - a 500 each, in production only, under
 * load. A window of 10^16 ms threw KV's "expireIn is too large" at every call. Such a window is
 * refused when the limit is made (`rateLimit`, the auth settings) or asked (`limitCalls`), naming
 * it; a limit past 7,000 is counted in buckets (tests/rate_limit_buckets_test.ts).
 */
import assert from "node:assert/strict";
import { limitCalls, rateLimit } from "../lib/kv/rate_limit.ts";
import { resolveAuth } from "../lib/auth/settings.ts";

const HOUR = 60 * 60 * 1000;

Deno.test("attack 22: a limit past what one KV value holds is counted in buckets, not a failure at its 7,281st call", async () => {
  using kv = await Deno.openKv(":memory:");
  const tenThousandAnHour = { limit: 10_000, windowMs: HOUR };
  // Refused when made until gaps30 (a RangeError), counted in buckets since.
  assert.deepEqual(await limitCalls(kv, ["api", "203.0.113.7"], tenThousandAnHour), {
    ok: true,
    remaining: 9_999,
  });
  rateLimit({ name: "api", ...tenThousandAnHour });
  resolveAuth({ signInPerClient: tenThousandAnHour }, undefined, "http:");
  for (const windowMs of [1e16, 1.5, Infinity]) {
    await assert.rejects(limitCalls(kv, ["api", "w"], { limit: 5, windowMs }), RangeError);
    assert.throws(() => rateLimit({ name: "api", limit: 5, windowMs }), /rateLimit\("api"\)/);
    assert.throws(
      () => resolveAuth({ signInPerClient: { limit: 5, windowMs } }, undefined, "http:"),
      /auth\.signInPerClient: a window of/,
    );
  }
});

Deno.test("attack 22: the largest logged limit counts to its end in one KV value", async () => {
  using kv = await Deno.openKv(":memory:");
  const t = 1_800_000_000_000;
  const key = ["api", "203.0.113.7"];
  const most = { limit: 7_000, windowMs: HOUR };
  // 6,999 calls in the window, as they would have logged themselves (each its own commit: slow).
  await kv.set(["rate_limit", ...key], Array.from({ length: 6_999 }, (_, i) => t - 6_999 + i));
  assert.deepEqual(await limitCalls(kv, key, most, () => t), { ok: true, remaining: 0 });
  const refused = await limitCalls(kv, key, most, () => t);
  assert.equal(refused.ok, false);
});
