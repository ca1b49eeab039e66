/**
 * @module
 * Request logging, in-process: off by default (stdout holds failures only), one JSON line per
 * request with `logRequests` (the entry points' `LOG_REQUESTS=1`, see process/settings_test.ts);
 * refusals ten a second of a kind at most, every one counted by a line: the next of its kind, the
 * second's end when none comes, or the app's close.
 */
import assert from "node:assert/strict";
import type { Telemetry, TraceIds } from "shell/server";
import { captureLogs, TestClient } from "shell/testing";
import { refusalLines } from "../lib/server/request_log.ts";
import { fixtureApp } from "./helpers/app.ts";

Deno.test("logRequests writes one JSON line per request", async () => {
  using logs = captureLogs();
  const res = await (await fixtureApp({ logRequests: true })).request("/no/such/page");
  await res.body?.cancel();
  assert.equal(logs.lines.length, 1);
  const [line] = logs.lines;
  assert.deepEqual(logs.of(res), [line], "the line is the request's, by its id");
  assert.equal(line.level, "info");
  assert.equal(line.msg, "GET /no/such/page 404");
  assert.equal(line.method, "GET");
  assert.equal(line.path, "/no/such/page");
  assert.equal(line.status, 404);
  assert.equal(line.request_id, res.headers.get("x-request-id"));
  assert.match(String(line.request_id), /^[0-9a-f-]{36}$/);
  assert.equal(typeof line.duration_ms, "number");
  assert.ok(
    !("trace_id" in line) && !("span_id" in line),
    "no span, no ids (process/page_cache_telemetry_test.ts: with one)",
  );
});

Deno.test("the line names the request's span as the telemetry gives it, asked only for a line", async () => {
  const ids: TraceIds = {
    trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
    span_id: "00f067aa0ba902b7",
  };
  let asked = 0;
  const telemetry: Telemetry = {
    captureFailure: () => ({ trace_id: null, span_id: null, sentry_event_id: null }),
    flush: () => Promise.resolve(),
    requestIds: () => (asked++, ids),
  };
  using logs = captureLogs();
  for (const logRequests of [false, true]) {
    const res = await (await fixtureApp({ logRequests, telemetry })).request("/styles.css");
    await res.body?.cancel();
  }
  assert.equal(asked, 1, "with logRequests off the span is not read");
  const [line, ...more] = logs.lines;
  assert.deepEqual(more, []);
  assert.deepEqual([line.trace_id, line.span_id], [ids.trace_id, ids.span_id]);
});

Deno.test("by default a request writes no line", async () => {
  using logs = captureLogs();
  for (const path of ["/", "/no/such/page", "/styles.css"]) {
    const res = await (await fixtureApp()).request(path);
    await res.body?.cancel();
  }
  assert.deepEqual(logs.lines, []);
});

Deno.test("a refusal over a rate limit writes one warn line, with Retry-After, also with logRequests off", async () => {
  using kv = await Deno.openKv(":memory:");
  const client = new TestClient(await fixtureApp({ kv }));
  const fields = { name: "Ada", message: "hello" };
  using logs = captureLogs();
  for (let i = 0; i < 5; i++) {
    const res = await client.submit("/wall", { fields });
    await res.body?.cancel();
    assert.equal(res.status, 303, `post ${i + 1} of the 5 a minute`);
  }
  assert.equal(logs.lines.length, 0, "a request let through writes nothing");
  for (const accept of ["text/html", "*/*"]) {
    const refused = await client.submit("/wall", { fields, headers: { accept } });
    await refused.body?.cancel();
    assert.equal(refused.status, 429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After: ${retryAfter}`);
    const [line, ...more] = logs.of(refused);
    assert.deepEqual(more, [], "one line per refusal");
    assert.equal(line.level, "warn");
    assert.match(line.msg, /^rate limited: POST \/_action\//);
    assert.equal(line.status, 429);
    assert.equal(line.method, "POST");
    assert.equal(line.retry_after_s, retryAfter);
  }
  assert.equal(logs.lines.filter((line) => line.msg.startsWith("rate limited")).length, 2);
});

Deno.test("a flood of refusals over a rate limit writes ten lines a second at most, the rest counted", async () => {
  using kv = await Deno.openKv(":memory:");
  const app = await fixtureApp({ kv });
  const client = new TestClient(app);
  const fields = { name: "Ada", message: "hello" };
  for (let i = 0; i < 5; i++) await (await client.submit("/wall", { fields })).body?.cancel();
  using logs = captureLogs();
  const first = Math.floor(Date.now() / 1000);
  const refusals = 200;
  for (let i = 0; i < refusals; i++) {
    const refused = await client.submit("/wall", { fields });
    await refused.body?.cancel();
    assert.equal(refused.status, 429);
  }
  // The seconds the flood spanned bound the lines, however slow this machine: before, 200 lines.
  // (Ten refusals' lines a second, and the count of those unwritten at the second's end.)
  const seconds = Math.floor(Date.now() / 1000) - first + 1;
  const lines = logs.lines.filter((line) => line.msg.startsWith("rate limited"));
  assert.ok(lines.length <= 11 * seconds, `${lines.length} lines in ${seconds} s`);
  assert.ok(lines.length >= Math.min(10, refusals));
  const said = lines.reduce((sum, line) => sum + 1 + Number(line.unlogged_before ?? 0), 0);
  assert.ok(said <= refusals, `${said} refusals said of ${refusals}`);
  await app.close(); // its count, now: not in a later test's lines
});

Deno.test("floods of refused bodies and of undecodable action calls write ten lines a second each at most", async () => {
  // Each was one warn line a request, as the 429s were: a client chose how much stdout grew.
  using kv = await Deno.openKv(":memory:");
  const app = await fixtureApp({ kv, actionBodyLimit: 1024 });
  using logs = captureLogs();
  const post = (body: string, type = "application/x-www-form-urlencoded") =>
    app.request("/_action/AAAAAAAAAAAAAAAAAAAA", {
      method: "POST",
      headers: { "Content-Type": type, Origin: "http://localhost" },
      body,
    });
  const first = Math.floor(Date.now() / 1000);
  const refusals = 150;
  const tooLarge = "x=" + "y".repeat(2048);
  for (let i = 0; i < refusals; i++) {
    const large = await post(tooLarge);
    await large.body?.cancel();
    assert.equal(large.status, 413);
    const forged = await post("$ACTION_ONCE=forged");
    await forged.body?.cancel();
    assert.equal(forged.status, 400);
  }
  const seconds = Math.floor(Date.now() / 1000) - first + 1;
  const kinds: [string, RegExp][] = [["body refused", /too large/], [
    "call refused",
    /^action call/,
  ]];
  for (const [kind, what] of kinds) {
    const lines = logs.lines.filter((line) => what.test(line.msg));
    // Before: 150 lines of each.
    assert.ok(lines.length <= 10 * seconds, `${kind}: ${lines.length} lines in ${seconds} s`);
    assert.ok(lines.length >= 10, `${kind}: each kind has its ten (${lines.length})`);
    assert.ok(lines.every((line) => line.level === "warn"));
    const said = lines.reduce((sum, line) => sum + 1 + Number(line.unlogged_before ?? 0), 0);
    assert.ok(said <= refusals, `${kind}: ${said} refusals said of ${refusals}`);
  }
});

Deno.test("a flood of forms posted to an action no build has writes ten lines a second of each kind at most", async () => {
  // Any client can post to any id: each post was an info line (a page older than the build) and,
  // for a form too large to keep for its page, a warn line too - 50 posts, 100 lines.
  using kv = await Deno.openKv(":memory:");
  const app = await fixtureApp({ kv });
  using logs = captureLogs();
  const body = Array.from({ length: 300 }, (_, i) => `f${i}=${"y".repeat(1000)}`).join("&");
  const first = Math.floor(Date.now() / 1000);
  const posts = 50;
  for (let i = 0; i < posts; i++) {
    const res = await app.request("/_action/AAAAAAAAAAAAAAAAAAAA", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: "http://localhost" },
      body,
    });
    await res.body?.cancel();
    assert.equal(res.status, 303);
  }
  const seconds = Math.floor(Date.now() / 1000) - first + 1;
  for (const what of [/^a call to an action this build does not have/, /too large to show again/]) {
    const lines = logs.lines.filter((line) => what.test(line.msg));
    assert.ok(lines.length <= 10 * seconds, `${what}: ${lines.length} lines in ${seconds} s`);
    assert.ok(lines.length >= 10, `${what}: ${lines.length} lines`);
  }
});

/** The refusals `lines` account for: each refusal's line, and the counts they carry. */
const said = (lines: Record<string, unknown>[]) =>
  lines.reduce(
    (sum, line) =>
      sum + (line.status ? 1 : 0) + Number(line.unlogged_before ?? 0) + Number(line.unlogged ?? 0),
    0,
  );

Deno.test("a flood that stops: what it had counted is written at its second's end, no later refusal needed", async () => {
  // Before, the count waited for the kind's next line: after the last flood of the day, none came.
  using logs = captureLogs();
  const refusals = refusalLines();
  // Early in a second, so that the fifteen fall in one.
  while (Date.now() % 1000 > 500) await new Promise((resolve) => setTimeout(resolve, 20));
  for (let i = 0; i < 15; i++) refusals("probe", "probe refused: POST /x", { status: 400 });
  // (An earlier test's app may say its own counts meanwhile: only this kind's lines are read.)
  const lines = () => logs.lines.filter((line) => String(line.msg).startsWith("probe"));
  assert.equal(lines().length, 10);
  for (let waited = 0; lines().length === 10 && waited < 3_000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.deepEqual(
    lines().slice(10).map(({ level, msg, unlogged }) => ({ level, msg, unlogged })),
    [{ level: "warn", msg: "probe: 5 not logged", unlogged: 5 }],
  );
  assert.equal(said(lines()), 15);
});

Deno.test("the app's close writes at once the counts no line said yet: every refusal is accounted for", async () => {
  using kv = await Deno.openKv(":memory:");
  const app = await fixtureApp({ kv });
  const client = new TestClient(app);
  const fields = { name: "Ada", message: "hello" };
  for (let i = 0; i < 5; i++) await (await client.submit("/wall", { fields })).body?.cancel();
  using logs = captureLogs();
  const refusals = 100;
  for (let i = 0; i < refusals; i++) {
    const refused = await client.submit("/wall", { fields });
    await refused.body?.cancel();
    assert.equal(refused.status, 429);
  }
  await app.close();
  const lines = logs.lines.filter((line) => String(line.msg).startsWith("rate limited"));
  assert.equal(said(lines), refusals, JSON.stringify(lines.slice(-2)));
});
