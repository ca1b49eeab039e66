/**
 * @module
 * Request logging, in-process: off by default (stdout holds failures only), one JSON line per
 * request with `logRequests` (the entry points' `LOG_REQUESTS=1`, see process/settings_test.ts).
 */
import assert from "node:assert/strict";
import { captureLogs } from "shell/testing";
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
});

Deno.test("by default a request writes no line", async () => {
  using logs = captureLogs();
  for (const path of ["/", "/no/such/page", "/styles.css"]) {
    const res = await (await fixtureApp()).request(path);
    await res.body?.cancel();
  }
  assert.deepEqual(logs.lines, []);
});
