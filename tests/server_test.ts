/**
 * @module
 * The framework's test app from its real build, in-process: each kind of route's status and
 * content (a page, a dynamic and a catch-all route, a group, an API route, a streamed page, an
 * island's page), not-found (behind a guarded folder's middleware too), 405, HEAD and the document's `<head>`; and, over a real connection,
 * that a HEAD response carries no body on the wire.
 */
import assert from "node:assert/strict";
import { fixtureApp, memoryApp, serveApp } from "./helpers/app.ts";

const NOT_FOUND_PAGE = "<h1>Page not found</h1>";

/** Headers that may differ between two responses to the same URL. */
const PER_RESPONSE = new Set(["date", "content-length", "transfer-encoding", "x-request-id"]);

function comparableHeaders(res: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of res.headers) {
    if (!PER_RESPONSE.has(name)) headers[name] = value.replace(/'nonce-[^']+'/, "'nonce-…'");
  }
  return headers;
}

const app = await fixtureApp();
const get = async (path: string, init?: RequestInit) => {
  const res = await app.request(path, init);
  return { res, body: await res.text() };
};

Deno.test("every kind of route renders", async () => {
  const pages: [string, string, string][] = [
    ["/", "Fixture", "<h1>Fixture</h1>"],
    ["/counter", "An island", '<output aria-live="polite">3</output>'],
    ["/streaming", "Streaming", "Streamed in after the shell."],
    ["/blog/first-post", "First post", "Rendered on the server from a dynamic route."],
    ["/blog/second-post", "Second post", "Another slug, the same route."],
    ["/docs/getting/started", "Docs", "<code>getting/started</code>"],
    ["/about", "About", "<code>routes/(info)/about.tsx</code>"],
    ["/list", "A long list", "Row <strong>100</strong>"],
  ];
  for (const [path, title, content] of pages) {
    const { res, body } = await get(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8", path);
    assert.ok(body.startsWith("<!DOCTYPE html>"), path);
    assert.ok(body.includes(`<title>${title}</title>`), `${path} has its title`);
    assert.ok(body.includes(content), `${path} shows ${content}`);
  }
});

Deno.test("every page the home page links answers 200", async () => {
  const { body } = await get("/");
  const links = [...body.matchAll(/<a href="([^"]+)">/g)].map(([, href]) => href);
  assert.ok(links.length >= 8, `links: ${links}`);
  for (const href of links) assert.equal((await get(href)).res.status, 200, href);
});

Deno.test("the document head has charset, viewport and the page's title", async () => {
  for (
    const [path, title] of [["/", "Fixture"], ["/about", "About"], ["/nope", "Page not found"]]
  ) {
    const { body } = await get(path);
    const head = body.slice(body.indexOf("<head>"), body.indexOf("</head>"));
    assert.match(head, /<meta charSet="utf-8"\/>/, path);
    assert.match(head, /<meta name="viewport" content="width=device-width, initial-scale=1"\/>/);
    assert.ok(head.includes(`<title>${title}</title>`), `${path}: the title is hoisted into head`);
    assert.equal(body.match(/<title>/g)?.length, 1, `${path} has one title`);
  }
});

Deno.test("a catch-all route receives the rest of the path", async () => {
  assert.ok((await get("/docs/a/b/c")).body.includes("<code>a/b/c</code>"));
  // One segment is enough; the catch-all's own folder is not matched.
  assert.ok((await get("/docs/x")).body.includes("<code>x</code>"));
  assert.equal((await get("/docs")).res.status, 404);
});

Deno.test("(group) folders stay out of the URL", async () => {
  assert.equal((await get("/about")).res.status, 200);
  assert.equal((await get("/(info)/about")).res.status, 404);
  assert.equal((await get("/info/about")).res.status, 404);
});

Deno.test("unknown URLs and unknown slugs get the 404 page", async () => {
  for (const path of ["/no/such/page", "/blog/no-such-post", "/api/nothing"]) {
    const { res, body } = await get(path);
    assert.equal(res.status, 404, path);
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
    assert.ok(body.includes(NOT_FOUND_PAGE), path);
    assert.ok(body.includes(`Nothing lives at <code>${path}</code>`), path);
    assert.ok(body.includes('<a href="/">Home</a>'), `${path} keeps the root layout`);
  }
});

Deno.test("an unknown URL in the guarded admin/ folder is refused like its page, then is a 404", async () => {
  for (const path of ["/admin", "/admin/no-such-page"]) {
    const { res } = await get(path);
    assert.equal(res.status, 401, path);
    assert.equal(res.headers.get("www-authenticate"), 'Basic realm="fixture"', path);
  }
  const authorization = `Basic ${btoa("admin:s3cret")}`;
  const { res, body } = await get("/admin/no-such-page", { headers: { authorization } });
  assert.equal(res.status, 404);
  assert.ok(body.includes(NOT_FOUND_PAGE));
});

Deno.test("the API route answers JSON", async () => {
  const res = await app.request("/api/time");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^application\/json/);
  const { now } = await res.json();
  assert.equal(new Date(now).toISOString(), now);
});

Deno.test("methods without a handler get 405 with Allow", async () => {
  // Any token is a method to HTTP: those that name what every object has (`constructor`, ...)
  // were looked up in the handlers' prototype and ran, a 500 with a digest for anyone who asked.
  const named = ["constructor", "toString", "valueOf", "hasOwnProperty", "__proto__"];
  for (const path of ["/", "/counter", "/blog/first-post", "/api/time"]) {
    for (const method of ["POST", "PUT", "DELETE", ...named]) {
      const { res } = await get(path, { method });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.get("allow"), "GET, HEAD");
    }
  }
});

Deno.test("HEAD answers like GET, without a body", async () => {
  for (
    const path of ["/", "/counter", "/streaming", "/blog/first-post", "/blog/nope", "/api/time"]
  ) {
    const getRes = await app.request(path);
    await getRes.body?.cancel();
    const headRes = await app.request(path, { method: "HEAD" });
    assert.equal(headRes.status, getRes.status, path);
    assert.deepEqual(comparableHeaders(headRes), comparableHeaders(getRes), path);
    assert.equal(await headRes.text(), "", path);
  }
});

Deno.test("HEAD reaches the server and gets no body on the wire", async () => {
  await using server = serveApp(await fixtureApp());
  // fetch() hides a body sent to HEAD, so look at the raw bytes.
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  await conn.write(
    new TextEncoder().encode("HEAD /counter HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
  );
  const raw = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
  const [head, body] = raw.split("\r\n\r\n");
  assert.match(head, /^HTTP\/1\.1 200 OK/);
  assert.equal(body, "");
});

Deno.test("a body announced larger than the whole body budget: 413, not a 503 to retry for ever", async () => {
  const app = memoryApp({
    routes: {
      "api/upload.ts": {
        handler: { POST: async (req: Request) => new Response(await req.text()) },
      },
    },
  }, { bodyBudget: 4096 });
  const post = (length: number) =>
    app.request("http://localhost/api/upload", {
      method: "POST",
      headers: { "Content-Length": String(length), "Content-Type": "text/plain" },
      body: new ReadableStream({ pull: (c) => c.close() }),
    });
  for (const length of [4097, 2 ** 32, 2 ** 53]) {
    const res = await post(length);
    await res.body?.cancel();
    assert.equal(res.status, 413, `Content-Length: ${length}`);
    assert.equal(res.headers.get("retry-after"), null, "no retry can succeed");
  }
  // Chunked, no length announced: cut with 413 once it passes the budget.
  let sent = 0;
  const chunked = await app.request("http://localhost/api/upload", {
    method: "POST",
    headers: { "Content-Type": "text/plain" },
    body: new ReadableStream({
      pull(c) {
        if ((sent += 1024) > 64 * 1024) c.close();
        else c.enqueue(new Uint8Array(1024).fill(97));
      },
    }),
  });
  await chunked.body?.cancel();
  assert.equal(chunked.status, 413);
  // Within it, a body still arrives whole.
  const small = await post(0);
  assert.equal(small.status, 200);
  await small.body?.cancel();
  await app.close();
});
