/**
 * @module
 * Request logging: off by default (stdout holds failures only), one JSON line per request with
 * `LOG_REQUESTS=1`.
 */
import assert from "node:assert/strict";
import { startServer } from "./helpers/server.ts";

Deno.test("LOG_REQUESTS=1 writes one JSON line per request", async () => {
  await using server = await startServer({ LOG_REQUESTS: "1" });
  const res = await server.fetch("/no/such/page");
  await res.body?.cancel();
  const line = await server.waitForLog((l) => l.path === "/no/such/page");
  assert.equal(line.level, "info");
  assert.equal(line.msg, "GET /no/such/page 404");
  assert.equal(line.method, "GET");
  assert.equal(line.status, 404);
  assert.match(String(line.request_id), /^[0-9a-f-]{36}$/);
  assert.equal(typeof line.duration_ms, "number");
});
