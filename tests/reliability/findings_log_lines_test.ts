/**
 * Issue 29, attack 8: log lines a client shapes. A request's path reaches stdout in the JSON line
 * of a refused body and of a failure; a client chooses it, up to what the HTTP head admits (tens of
 * kilobytes). A log service trims long entries (Deno Deploy Classic at 2 KB), which then lost every
 * field after the path - the status, the request id, the trace and Sentry links, the error - so
 * the path is logged clipped, with its length.
 */
import assert from "node:assert/strict";
import { builtTarget, exchange, startTarget } from "./target.ts";

const FILES = {
  "routes/findings/fails/[...rest].ts": `export const handler = {
    GET() { throw new Error("fails on purpose"); },
  };\n`,
};

/** About what the HTTP head of one request admits: Deno refuses heads much longer. */
const LONG = 60_000;
/** Far below a log service's trim (2 KB), with room for the line's other fields. */
const MOST = 1_500;

Deno.test("attack 8: a long path does not make a long log line", async (t) => {
  const built = await builtTarget(FILES);
  await using server = await startTarget({}, { root: built.root });
  const refusing = server;
  await using requests = await startTarget({ LOG_REQUESTS: "1" }, { root: built.root });

  await t.step("a refused body's line", async () => {
    const path = `/_action/${"a".repeat(LONG)}`;
    const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Content-Length: 100000000\r\nConnection: close\r\n\r\n`;
    const res = await exchange(server.port, head, { timeoutMs: 10_000, headOnly: true });
    assert.equal(res.status, 413);
    const line = await server.waitForLog((line) => line.msg === "request body too large");
    assert.ok(JSON.stringify(line).length < MOST, `a line of ${JSON.stringify(line).length}`);
    assert.equal(line.status, 413);
    assert.ok(String(line.path).startsWith("/_action/aaa"), "the path's beginning is kept");
  });

  await t.step("a long method: a refused body's line, a request's line", async () => {
    // Attack 9: the method is the client's too, any token HTTP admits: tens of kilobytes, in the
    // line of a refused body (by default) and, with LOG_REQUESTS, twice in the request's line.
    const method = "M".repeat(LONG);
    const ours = (line: Record<string, unknown>) => String(line.method).startsWith("MMM");
    const refused = (line: Record<string, unknown>) =>
      ours(line) && line.msg === "request body too large";
    const answered = (line: Record<string, unknown>) => ours(line) && line.level === "info";
    for (const [server, which] of [[refusing, refused], [requests, answered]] as const) {
      const head = `${method} /_action/x HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Content-Length: 100000000\r\nConnection: close\r\n\r\n`;
      const res = await exchange(server.port, head, { timeoutMs: 10_000, headOnly: true });
      assert.equal(res.status, 413);
      const line = await server.waitForLog(which);
      assert.ok(JSON.stringify(line).length < MOST, `a line of ${JSON.stringify(line).length}`);
      assert.equal(line.status, 413);
    }
  });

  await t.step("a failure's line", async () => {
    const res = await server.fetch(`/findings/fails/${"b".repeat(LONG)}`);
    const html = await res.text();
    assert.equal(res.status, 500);
    const digest = /Digest: <code>([^<]+)<\/code>/.exec(html)?.[1];
    const line = await server.waitForLog((line) => line.digest === digest);
    const length = JSON.stringify(line).length;
    // The error's own stack is the line's business: it is the path that must not be.
    assert.ok(String(line.path).length < 1_100, `a path of ${String(line.path).length}`);
    assert.ok(length < LONG, `a line of ${length}`);
    assert.equal(line.status, 500);
    assert.ok(String(line.path).startsWith("/findings/fails/bbb"));
  });
});
