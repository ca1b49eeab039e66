/**
 * @module
 * The example's cached page, `/headline`, in-process with its origin configured (the page cache
 * needs it): rendered once, then answered from the cache; publishing a headline through the form,
 * without JavaScript, drops it (`revalidateTag`), and the next load shows the new one; publishing
 * is rate-limited per client, so nobody can keep the page uncached in a loop. Goes with the example.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import manifest from "@/_build/manifest.gen.ts";
import { createApp } from "shell/server";
import { TestClient } from "shell/testing";

const root = fileURLToPath(new URL("../..", import.meta.url));

Deno.test("/headline: cached, and published headlines drop it", async () => {
  const kv = await Deno.openKv(":memory:");
  const app = createApp(manifest, { root, kv, origins: ["http://localhost"] });
  const client = new TestClient(app);
  try {
    const first = await client.get("/headline");
    assert.equal(first.headers.get("x-cache"), "MISS");
    const html = await first.text();
    assert.match(html, /<h1>Pages served faster than React can render them<\/h1>/);
    const again = await client.get("/headline");
    assert.equal(again.headers.get("x-cache"), "HIT");
    // The render's own visitor got its form's submission key; the stored page keeps none.
    const shared = (text: string) =>
      text.replace(/nonce="[^"]+"/g, "").replace(
        /<input type="hidden" name="\$ACTION_ONCE"[^>]*>/,
        "",
      );
    assert.equal(shared(await again.text()), shared(html));

    const published = await client.submit("/headline", {
      fields: { headline: "Cached, and never stale for long" },
      follow: true,
    });
    assert.match(await published.text(), /<h1>Cached, and never stale for long<\/h1>/);
    const after = await client.get("/headline");
    assert.equal(after.headers.get("x-cache"), "HIT");
    assert.match(await after.text(), /<h1>Cached, and never stale for long<\/h1>/);

    const refused = await client.submit("/headline", { fields: { headline: " " } });
    assert.equal(refused.status, 400);
    await refused.body?.cancel();
  } finally {
    app.close();
    kv.close();
  }
});

Deno.test("/headline: publishing is limited to 5 a minute per client; the 6th is 429 and drops nothing", async () => {
  const kv = await Deno.openKv(":memory:");
  const app = createApp(manifest, { root, kv, origins: ["http://localhost"] });
  const client = new TestClient(app);
  try {
    for (let i = 1; i <= 5; i++) {
      const res = await client.submit("/headline", { fields: { headline: `Headline ${i}` } });
      assert.ok(res.status < 400, `publication ${i}: ${res.status}`);
      await res.body?.cancel();
    }
    await (await client.get("/headline")).text(); // cached again after the 5th
    const refused = await client.submit("/headline", { fields: { headline: "One too many" } });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get("retry-after")) > 0);
    await refused.body?.cancel();
    const after = await client.get("/headline");
    assert.equal(after.headers.get("x-cache"), "HIT", "the refused publication dropped nothing");
    const html = await after.text();
    assert.match(html, /<h1>Headline 5<\/h1>/);
    assert.doesNotMatch(html, /One too many/);
  } finally {
    app.close();
    kv.close();
  }
});
