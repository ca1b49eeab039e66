/**
 * @module
 * Issue 22, finding 10: the KV rate limiter when the clock steps. A client that used its calls
 * just before the clock stepped back an hour was refused for that whole hour (its calls looked to
 * be in the future); now a call is never held against its key for longer than the window, however
 * the clock moves, and the limit still holds right after the step.
 */
import assert from "node:assert/strict";
import { limitCalls } from "../lib/kv/rate_limit.ts";

const FIVE_A_MINUTE = { limit: 5, windowMs: 60_000 };
const HOUR = 60 * 60 * 1000;

Deno.test("rate limit: the clock steps back an hour: refused for a window at most", async () => {
  using kv = await Deno.openKv(":memory:");
  let t = 1_800_000_000_000;
  const call = () => limitCalls(kv, ["sign", "203.0.113.7"], FIVE_A_MINUTE, () => t);
  for (let i = 0; i < 5; i++) assert.equal((await call()).ok, true);
  assert.equal((await call()).ok, false, "over the limit");

  t -= HOUR; // NTP, a VM restored, an operator's mistake
  const right = await call();
  assert.equal(right.ok, false, "the calls just made still count");
  if (!right.ok) assert.ok(right.retryAfterSeconds <= 60, `${right.retryAfterSeconds} s`);

  t += FIVE_A_MINUTE.windowMs + 1;
  assert.equal((await call()).ok, true, "a window after the step, the client may call again");
});

Deno.test("rate limit: another instance's clock ahead counts as now", async () => {
  using kv = await Deno.openKv(":memory:");
  const now = 1_800_000_000_000;
  const key = ["sign", "203.0.113.8"];
  // Five calls by an instance whose clock runs ten minutes ahead.
  for (let i = 0; i < 5; i++) {
    await limitCalls(kv, key, FIVE_A_MINUTE, () => now + 10 * 60_000);
  }
  const refused = await limitCalls(kv, key, FIVE_A_MINUTE, () => now);
  assert.equal(refused.ok, false);
  const later = await limitCalls(kv, key, FIVE_A_MINUTE, () => now + 60_001);
  assert.equal(later.ok, true, "free a window after they were seen, not ten minutes later");
});
