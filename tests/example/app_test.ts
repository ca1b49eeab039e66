/**
 * @module
 * The example app's pages and actions, in-process, tested as a product's author would with the
 * test kit (`shell/testing`): the app from its build, asked with `app.request()`; each example
 * page renders; the guestbook's form posted without JavaScript comes back with its errors, then
 * signs; `/admin`, its page and its action, only for a user with the role `admin`
 * (`requireRole("admin")`: anonymous to `/login`, 403 without the role); over a real connection
 * too. Goes with the example.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import manifest from "@/_build/manifest.gen.ts";
import { whoAmI } from "@/routes/admin/_actions.ts";
import { createApp } from "shell/server";
import { TestClient } from "shell/testing";
import { addAdmin, ADMIN } from "./users.ts";

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
    ["/signup", "<h1>Sign up</h1>"],
    ["/login", "<h1>Log in</h1>"],
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

Deno.test("/admin and its action: only for the role admin", async () => {
  const anonymous = new TestClient(app);
  const page = await anonymous.request("/admin");
  await page.body?.cancel();
  assert.equal(page.status, 303); // to the login page, and back after
  assert.equal(page.headers.get("location"), "/login?next=%2Fadmin");
  // A call from a script: refused before the action runs.
  const refused = await anonymous.call(whoAmI).catch((error) => error);
  assert.equal(refused.status, 401);
  assert.equal(refused.message, "Sign in to continue.");

  // Signed up through the form, without JavaScript: a user without the role.
  const member = new TestClient(app);
  const account = await member.submit("/signup", {
    fields: { email: "member@example.com", password: "a long enough passphrase" },
    follow: true,
  });
  assert.match(await account.text(), /Signed in as <strong>member@example.com<\/strong>/);
  const forbidden = await member.get("/admin");
  assert.equal(forbidden.status, 403);
  assert.match(
    await forbidden.text(),
    /<h1>Your account does not have access to this page\.<\/h1>/,
  );
  assert.equal((await member.call(whoAmI).catch((error) => error)).status, 403);

  // The admin, logged in through the form: on to /admin, where the action knows them.
  await addAdmin(kv);
  const admin = new TestClient(app);
  const landed = await admin.submit("/login?next=%2Fadmin", { fields: ADMIN, follow: true });
  assert.equal(landed.status, 200);
  assert.match(await landed.text(), /<h1>Admin<\/h1>/);
  assert.equal(await admin.call(whoAmI), ADMIN.email);
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
