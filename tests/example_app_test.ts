// tests/example_app_test.ts
/**
 * @module
 * The example of docs/testing.md, as an app's author writes it: the app from its build, asked
 * in-process with `app.request()`, and served on a free port where a real connection matters.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import manifest from "@/_build/manifest.gen.ts";
import { createApp } from "shell/server";

// Where `static/` and the build's assets are: the project root.
const root = fileURLToPath(new URL("..", import.meta.url));

Deno.test("a blog post renders; an unknown one is the 404 page", async () => {
  const app = createApp(manifest, { root });
  const res = await app.request("/blog/hello-world");
  assert.equal(res.status, 200);
  assert.match(await res.text(), /<h1>Hello, world<\/h1>/);

  const missing = await app.request("/blog/no-such-post");
  assert.equal(missing.status, 404);
  await missing.body?.cancel();
});

Deno.test("the admin page and its action refuse anonymous visitors", async () => {
  const app = createApp(manifest, { root, kv: await Deno.openKv(":memory:") });
  const page = await app.request("/admin");
  assert.equal(page.status, 303); // to the login page, and back after
  assert.equal(page.headers.get("location"), "/login?next=%2Fadmin");

  const { id } = manifest.actions.entries.find((entry) => entry.name === "whoAmI")!;
  // A call from a script: refused before the action runs.
  const call = await app.request(`/_action/${id}`, {
    method: "POST",
    body: new FormData(),
    headers: { Origin: "http://localhost", Accept: "application/json" },
  });
  assert.equal(call.status, 401);
  assert.deepEqual(await call.json(), { error: { status: 401, message: "Sign in to continue." } });
});

Deno.test("over a real connection", async () => {
  const app = createApp(manifest, { root });
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  const res = await fetch(`http://127.0.0.1:${server.addr.port}/api/time`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^application\/json/);
  assert.ok((await res.json()).now);
  app.close();
});
