/**
 * @module
 * `app.idle()` (`lib/server/in_flight.ts`): a request is in flight until its answer is ready, and
 * a page until React has rendered all of it - its Suspense boundaries after the shell too - so that
 * a stop closes KV under none of them (`lib/cli/stop.ts`); and `app.stop()`, after which a request
 * that comes anyway is refused 503 rather than meet the closed store.
 */
import assert from "node:assert/strict";
import { Suspense, use } from "react";
import { kvOf } from "../lib/data.ts";
import type { Handlers } from "../lib/mod.ts";
import { captureLogs } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";
import { within } from "./helpers/wait.ts";

const PENDING = Symbol("pending");
/** Whether `promise` has settled already (a settled one wins the race: it comes first). */
const settled = async (promise: Promise<unknown>) =>
  await Promise.race([promise, PENDING]) !== PENDING;

Deno.test("app.idle waits for an API route's answer and a page's last boundary", async () => {
  const late = Promise.withResolvers<string>();
  const answer = Promise.withResolvers<Response>();
  const entered = Promise.withResolvers<void>();
  function Late() {
    return <p>{use(late.promise)}</p>;
  }
  const api: Handlers = {
    GET() {
      entered.resolve();
      return answer.promise;
    },
  };
  const app = memoryApp({
    routes: {
      "later.tsx": {
        default: () => <Suspense fallback={<p>loading</p>}>{<Late />}</Suspense>,
      },
      "api/slow.ts": { handler: api },
    },
  });
  assert.ok(await settled(app.idle()), "idle with nothing asked");

  const page = await app.request("/later"); // the shell: its boundary still waits
  assert.equal(page.status, 200);
  assert.equal(await settled(app.idle()), false, "a page in flight until its boundary renders");
  const slow = app.request("/api/slow");
  await entered.promise;
  late.resolve("at last");
  assert.match(await page.text(), /at last/);
  assert.equal(await settled(app.idle()), false, "an API route in flight until it answers");

  answer.resolve(new Response("done"));
  assert.equal(await (await slow).text(), "done");
  await within(app.idle(), 5000, "idle once both are done");
  await app.close();
});

Deno.test("app.stop waits for the requests in flight, then refuses later ones 503 instead of failing on the closed store", async () => {
  const kv = await Deno.openKv(":memory:");
  await kv.set(["value"], "kept");
  const answer = Promise.withResolvers<void>();
  const entered = Promise.withResolvers<void>();
  const read: Handlers = {
    async GET(_req, ctx) {
      return Response.json((await kvOf(ctx).get(["value"])).value);
    },
  };
  const slow: Handlers = {
    async GET(_req, ctx) {
      entered.resolve();
      await answer.promise;
      return Response.json((await kvOf(ctx).get(["value"])).value);
    },
  };
  const app = memoryApp({
    routes: { "api/read.ts": { handler: read }, "api/slow.ts": { handler: slow } },
  }, {
    kv,
  });
  using logs = captureLogs();
  const inFlight = app.request("/api/slow");
  await entered.promise;
  const stopped = app.stop();
  const during = await app.request("/api/read");
  assert.equal(await during.json(), "kept", "a request while one is in flight is served");
  assert.equal(await settled(stopped), false, "not stopped while a request is in flight");
  answer.resolve();
  assert.equal(await (await inFlight).json(), "kept");
  await within(stopped, 5000, "stopped once it answered");
  kv.close(); // as lib/cli/stop.ts does then

  for (const method of ["GET", "POST"]) {
    const res = await app.request("/api/read", { method });
    assert.equal(res.status, 503, `${method}: ${await res.clone().text()}`);
    assert.equal(res.headers.get("retry-after"), "1");
    assert.equal(res.headers.get("connection"), "close");
    assert.match(await res.text(), /stopping/);
  }
  assert.deepEqual(logs.lines.map(({ level, msg, status }) => ({ level, msg, status })), [
    { level: "info", msg: "stopping: GET /api/read", status: 503 },
    { level: "info", msg: "stopping: POST /api/read", status: 503 },
  ]);
});

Deno.test("a cached page rendered during the stop is not written to the store the stop then closes", async () => {
  const kv = await Deno.openKv(":memory:");
  const late = Promise.withResolvers<string>();
  function Late() {
    return <p>{use(late.promise)}</p>;
  }
  const app = memoryApp({
    routes: {
      "later.tsx": {
        cache: { maxAge: 60 },
        default: () => <Suspense fallback={<p>loading</p>}>{<Late />}</Suspense>,
      },
    },
  }, { kv, origins: ["https://app.example"], allowedHosts: ["app.example"] });
  using logs = captureLogs();
  const page = await app.request("https://app.example/later"); // a miss: rendered for the cache
  assert.equal(page.status, 200);
  const stopped = app.stop();
  late.resolve("at last");
  await within(stopped, 5000, "stopped once the page rendered");
  kv.close(); // as lib/cli/stop.ts does then
  assert.match(await page.text(), /at last/, "the page is answered whole");
  await app.close(); // waits for the cache's writes under way
  assert.deepEqual(logs.lines, []);
});
