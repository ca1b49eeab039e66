/**
 * @module
 * The example app's pages and actions, in-process, tested as a product's author would with the
 * test kit (`shell/testing`): the app from its build, asked with `app.request()`; each example
 * page renders; the guestbook's form posted without JavaScript comes back with its errors, then
 * signs; the admin's action runs only behind its folder's basic auth; over a real connection too.
 * Goes with the example.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import manifest from "@/_build/manifest.gen.ts";
import { whoAmI } from "@/routes/admin/_actions.ts";
import { createApp } from "shell/server";
import { TestClient } from "shell/testing";

// Where `static/` and the build's assets are: the project root.
const root = fileURLToPath(new URL("../..", import.meta.url));
const kv = await Deno.openKv(":memory:");
const app = createApp(manifest, { root, kv });

Deno.test("every example page renders; an unknown post is the 404 page", async () => {
  const client = new TestClient(app);
  const pages: [string, string][] = [
    ["/counter", '<output aria-live="polite">3</output>'],
    ["/streaming", "Sunny, with a chance of hydration."],
    ["/list", "<strong>100</strong>"],
    ["/blog/hello-world", "<h1>Hello, world</h1>"],
    ["/docs/getting/started", "<code>getting/started</code>"],
    ["/about", "<code>routes/(info)/about.tsx</code>"],
    ["/guestbook", "<h1>A guestbook</h1>"],
  ];
  for (const [path, shown] of pages) {
    const res = await client.get(path);
    assert.equal(res.status, 200, path);
    assert.ok((await res.text()).includes(shown), `${path} shows ${shown}`);
  }
  assert.ok((await (await client.get("/api/time")).json()).now);
  const missing = await client.get("/blog/no-such-post");
  assert.equal(missing.status, 404);
  await missing.body?.cancel();
});

Deno.test("the guestbook's form, without JavaScript: its errors, then the signing", async () => {
  const client = new TestClient(app);
  const refused = await client.submit("/guestbook", {
    fields: { name: "", message: "hi" },
    follow: true,
  });
  const html = await refused.text();
  assert.match(html, /<p id="name-error" class="field-error">Please tell us your name\.<\/p>/);
  assert.match(html, /<textarea name="message"[^>]*>hi<\/textarea>/);

  const signed = await client.submit("/guestbook", {
    fields: { name: "Ada", message: "Signed in a test." },
    follow: true,
  });
  assert.match(await signed.text(), /<q>Signed in a test\.<\/q>/);
});

Deno.test("the admin action runs only behind its folder's basic auth", async () => {
  const client = new TestClient(app);
  const refused = await client.call(whoAmI).catch((error) => error);
  assert.equal(refused.status, 401);
  const user = await client.callWith(whoAmI, [], {
    headers: { Authorization: `Basic ${btoa("admin:admin")}` },
  });
  assert.equal(user, "admin");
});

Deno.test("over a real connection", async () => {
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  const client = new TestClient(`http://127.0.0.1:${server.addr.port}`);
  const res = await client.get("/api/time");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^application\/json/);
  assert.ok((await res.json()).now);
  app.close();
});
