/**
 * @module
 * A client's value too long for a KV key - whom a rate limit counts, a job's key from a header, a
 * route param naming a log - is a 400 (code `too_long`) with no failure line, where KV's bare
 * error was a 500 with a digest; a key too long by the developer's own name is a `TypeError`
 * naming it.
 */
import assert from "node:assert/strict";
import {
  deadJobs,
  defineJobs,
  dropDeadJob,
  KeyTooLongError,
  kvLog,
  kvOf,
  limitCalls,
  newest,
  rateLimit,
  retryDeadJob,
} from "../lib/data.ts";
import type { RouteModule } from "../lib/server/manifest.ts";
import { captureLogs } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";

const LONG = "x".repeat(2_100);
const REFUSED = {
  error: { status: 400, message: "An id in this request is too long.", code: "too_long" },
};

Deno.test("a client's value too long for a KV key reaching a limit, a job or a log: 400 too_long, no failure line", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const jobs = defineJobs({ hook: { run(_: string) {} } });
  const api = (
    answer: (req: Request, value: string, kv: Deno.Kv) => Promise<unknown>,
  ): RouteModule => ({
    handler: {
      async POST(req, ctx) {
        await answer(req, ctx.params.value, kvOf(ctx));
        return new Response(null, { status: 204 });
      },
    },
  });
  const app = memoryApp({
    routes: {
      "limited/[value].ts": api((_req, value, kv) =>
        limitCalls(kv, ["export", value], { limit: 3, windowMs: 60_000 })
      ),
      "hook/[value].ts": api((req, _value, kv) =>
        jobs.enqueue(kv, "hook", "", {
          key: req.headers.get("x-delivery") ?? undefined,
          delay: 3_600_000, // not delivered after the app closes
        })
      ),
      "rooms/[value].ts": api((_req, value, kv) => newest(kv, kvLog(["rooms", value]), 10)),
    },
    jobs,
  }, { kv });
  const post = (path: string, headers: Record<string, string> = {}) =>
    app.request(path, { method: "POST", headers: { accept: "application/json", ...headers } });
  for (
    const res of [
      await post(`/limited/${LONG}`),
      await post("/hook/1", { "x-delivery": LONG }),
      await post(`/rooms/${LONG}`),
    ]
  ) {
    // Before: 500, a digest and an error line for each.
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), REFUSED);
  }
  assert.deepEqual(logs.lines.filter((line) => line.level === "error"), []);
  // Short enough, each works.
  for (const path of ["/limited/ada", "/rooms/kitchen"]) {
    assert.equal((await post(path)).status, 204);
  }
  assert.equal((await post("/hook/1", { "x-delivery": "d-1" })).status, 204);
  await app.close();
});

Deno.test("what a KeyTooLongError says: where, how large, for the developer only", async () => {
  await using kv = await Deno.openKv(":memory:");
  const refused = await limitCalls(kv, ["export", LONG], { limit: 1, windowMs: 1_000 })
    .catch((error) => error);
  assert.ok(refused instanceof KeyTooLongError);
  assert.equal(refused.where, 'limitCalls("export")');
  assert.ok(refused.bytes > 2_048);
  assert.ok(!refused.message.includes("x"), "no part of the client's value in the message");
});

Deno.test("a key too long by the developer's own name: a TypeError naming it", async () => {
  await using kv = await Deno.openKv(":memory:");
  const name = "n".repeat(2_100);
  await assert.rejects(
    limitCalls(kv, [name, "ada"], { limit: 1, windowMs: 1_000 }),
    /^TypeError: limitCalls\("n{40}\.\.\."\): its key is too long for KV \(\d+ bytes encoded, max 2048\)/,
  );
  assert.throws(
    () => rateLimit({ name, limit: 1, windowMs: 1_000 }),
    /^TypeError: rateLimit\("n{40}/,
  );
  assert.throws(() => kvLog([name, "kitchen"]), /^TypeError: kvLog\(\["n{40}\.\.\.", \.\.\.\]\)/);
  const jobs = defineJobs({ [name]: { run() {} } });
  await assert.rejects(jobs.enqueue(kv, name, undefined), /^TypeError: Job "n{40}\.\.\.": its key/);
});

Deno.test("a rate limit's name just short enough when it is made: its requests are never a TypeError", async () => {
  await using kv = await Deno.openKv(":memory:");
  using logs = captureLogs();
  const limit = { limit: 1, windowMs: 1_000 };
  // The longest name rateLimit takes. Before, it left out the "buckets", n that limitCalls adds:
  // a name a few bytes shorter passed, and every request threw a TypeError, a 500.
  let name = "";
  for (let length = 2_048; length > 1_900 && !name; length--) {
    try {
      rateLimit({ name: "n".repeat(length), ...limit });
      name = "n".repeat(length);
    } catch { /* too long still */ }
  }
  const app = memoryApp({
    routes: {
      "_middleware.ts": { handler: rateLimit({ name, ...limit }) },
      "index.ts": { handler: { GET: () => new Response("ok") } },
    },
  }, { kv });
  const res = await app.request("/", { headers: { accept: "application/json" } });
  await res.body?.cancel();
  // Counted, whoever it counts: "unknown" here, or an IPv6 client's /64 (review34: the check used
  // an empty client, and a name within ~40 bytes of the limit refused every IPv6 request).
  assert.equal(res.status, 200);
  assert.equal((await limitCalls(kv, [name, "2001:db8:aaaa:bbbb::/64"], limit)).ok, true);
  assert.deepEqual(logs.lines.filter((line) => line.level === "error"), []);
  await app.close();
});

Deno.test("a dead job's name or id too long for a key names none; a page's place too long is a 400", async () => {
  await using kv = await Deno.openKv(":memory:");
  // Before: KV's bare TypeError ("Key too large for read"), a 500 on an ops page.
  assert.equal(await retryDeadJob(kv, "hook", LONG), false);
  assert.equal(await dropDeadJob(kv, "hook", LONG), false);
  assert.deepEqual(await deadJobs(kv, LONG), []);
  await assert.rejects(
    deadJobs(kv, "hook", { after: { job: "hook", id: LONG } }),
    (error: Error) => error instanceof KeyTooLongError && error.status === 400,
  );
});
