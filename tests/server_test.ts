/**
 * @module
 * The example app over real HTTP: each route's status and content, not-found, 405, HEAD, the API
 * route and the document's `<head>`. One server for the whole file.
 */
import assert from "node:assert/strict";
import { startServer } from "./helpers/server.ts";

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

Deno.test("the example app answers over HTTP", async (t) => {
  await using server = await startServer();
  const get = async (path: string) => {
    const res = await server.fetch(path);
    return { res, body: await res.text() };
  };

  await t.step("every example route renders", async () => {
    const pages: [string, string, string][] = [
      ["/", "Examples", "<h1>Examples</h1>"],
      ["/counter", "An island", '<output aria-live="polite">3</output>'],
      ["/streaming", "Streaming", "Sunny, with a chance of hydration."],
      ["/blog/hello-world", "Hello, world", "The first post: rendered on the server."],
      ["/blog/islands", "Islands", "Only the interactive parts ship JavaScript."],
      ["/docs/getting/started", "Docs", "<code>getting/started</code>"],
      ["/about", "About", "<code>routes/(info)/about.tsx</code>"],
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

  await t.step("the home page links every example, and each link answers 200", async () => {
    const { body } = await get("/");
    const examples = [
      "/counter",
      "/streaming",
      "/list",
      "/blog/hello-world",
      "/docs/getting/started",
      "/about",
      "/api/time",
      "/guestbook",
    ];
    for (const href of examples) {
      assert.ok(body.includes(`<a href="${href}">`), href);
      assert.equal((await get(href)).res.status, 200, href);
    }
  });

  await t.step("the document head has charset, viewport and the page's title", async () => {
    for (
      const [path, title] of [["/", "Examples"], ["/about", "About"], ["/nope", "Page not found"]]
    ) {
      const { body } = await get(path);
      const head = body.slice(body.indexOf("<head>"), body.indexOf("</head>"));
      assert.match(head, /<meta charSet="utf-8"\/>/, path);
      assert.match(head, /<meta name="viewport" content="width=device-width, initial-scale=1"\/>/);
      assert.ok(
        head.includes(`<title>${title}</title>`),
        `${path}: the title is hoisted into head`,
      );
      assert.equal(body.match(/<title>/g)?.length, 1, `${path} has one title`);
    }
  });

  await t.step("a catch-all route receives the rest of the path", async () => {
    const { body } = await get("/docs/a/b/c");
    assert.ok(body.includes("<code>a/b/c</code>"));
    // One segment is enough; the catch-all's own folder is not matched.
    assert.ok((await get("/docs/x")).body.includes("<code>x</code>"));
    assert.equal((await get("/docs")).res.status, 404);
  });

  await t.step("(group) folders stay out of the URL", async () => {
    assert.equal((await get("/about")).res.status, 200);
    assert.equal((await get("/(info)/about")).res.status, 404);
    assert.equal((await get("/info/about")).res.status, 404);
  });

  await t.step("unknown URLs and unknown slugs get the 404 page", async () => {
    for (const path of ["/no/such/page", "/blog/no-such-post", "/api/nothing"]) {
      const { res, body } = await get(path);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
      assert.ok(body.includes(NOT_FOUND_PAGE), path);
      assert.ok(body.includes(`Nothing lives at <code>${path}</code>`), path);
      assert.ok(body.includes('<a href="/">Home</a>'), `${path} keeps the root layout`);
    }
  });

  await t.step("the API route answers JSON", async () => {
    const res = await server.fetch("/api/time");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type")!, /^application\/json/);
    const { now } = await res.json();
    assert.equal(new Date(now).toISOString(), now);
  });

  await t.step("methods without a handler get 405 with Allow", async () => {
    for (const path of ["/", "/counter", "/blog/hello-world"]) {
      for (const method of ["POST", "PUT", "DELETE"]) {
        const res = await server.fetch(path, { method });
        await res.body?.cancel();
        assert.equal(res.status, 405, `${method} ${path}`);
        assert.equal(res.headers.get("allow"), "GET, HEAD");
      }
    }
    const res = await server.fetch("/api/time", { method: "POST" });
    await res.body?.cancel();
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
  });

  await t.step("HEAD answers like GET, without a body", async () => {
    for (
      const path of ["/", "/counter", "/streaming", "/blog/hello-world", "/blog/nope", "/api/time"]
    ) {
      const getRes = await server.fetch(path);
      await getRes.body?.cancel();
      const headRes = await server.fetch(path, { method: "HEAD" });
      assert.equal(headRes.status, getRes.status, path);
      assert.deepEqual(comparableHeaders(headRes), comparableHeaders(getRes), path);
      assert.equal(await headRes.text(), "", path);
    }
  });

  await t.step("HEAD reaches the server and gets no body on the wire", async () => {
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
});
