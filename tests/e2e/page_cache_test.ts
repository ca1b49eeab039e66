/**
 * @module
 * A page from the shared page cache in Chromium: the test app's `/counter` (an island) with `cache`
 * added. Served as a HIT — compressed, as Chromium asks — its island hydrates and responds, and its
 * scripts run under the CSP naming the render's nonce (no CSP violation in the console); reloaded,
 * the browser revalidates with `If-None-Match`, gets 304 and keeps a working page.
 */
import assert from "node:assert/strict";
import { createApp } from "../../lib/server.ts";
import { fixtureBuild } from "../helpers/app.ts";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";

Deno.test("a cached page in the browser: HIT hydrates under the CSP, 304 on reload keeps it working", async () => {
  const { root, manifest } = await fixtureBuild();
  const routes = manifest.routes.map((route) =>
    route.file === "counter.tsx"
      ? { ...route, module: { ...route.module, cache: { maxAge: 600 } } }
      : route
  );
  const kv = await Deno.openKv(":memory:");
  /** What the server answered to each request for the page, as it went on the wire. */
  const sent: number[] = [];
  // The cache keys pages by the configured origin: the server binds a port the system picks (none
  // another process can take meanwhile), then the app is made for it.
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req, info) => {
      const res = await app.fetch(req, info);
      if (new URL(req.url).pathname === "/counter") sent.push(res.status);
      return res;
    },
  );
  const origin = `http://127.0.0.1:${server.addr.port}`;
  const app = createApp({ ...manifest, routes }, { root, kv, origins: [origin] });
  await using browser = await launchBrowser();
  try {
    const warm = await fetch(origin + "/counter");
    await warm.body?.cancel();
    assert.equal(warm.headers.get("x-cache"), "MISS");

    const page = await browser.newPage();
    const errors = pageErrors(page);
    const first = await page.goto(origin + "/counter");
    assert.equal(first?.headers()["x-cache"], "HIT");
    assert.equal(first?.headers()["content-encoding"], "gzip", "the coding held, as Chromium asks");
    const csp = first!.headers()["content-security-policy"];
    const nonce = /'nonce-([^']+)'/.exec(csp)![1];
    await hydrated(page);
    const scripts = await page.evaluate(() =>
      [...document.querySelectorAll("script")].map((s) => s.nonce)
    );
    assert.ok(scripts.length > 0);
    assert.ok(scripts.every((n) => n === nonce), "every script carries the nonce the CSP names");
    await page.getByRole("button", { name: "Increment" }).click();
    await page.waitForFunction(() => document.querySelector("output")?.textContent === "4");

    // The reload's own request, read from its answer (not from a listener that may still be
    // reading it when the page is done).
    const again = (await page.reload())!;
    await hydrated(page);
    await page.getByRole("button", { name: "Increment" }).click();
    await page.waitForFunction(() => document.querySelector("output")?.textContent === "4");
    const ifNoneMatch = await again.request().headerValue("if-none-match");
    assert.ok(ifNoneMatch?.startsWith('W/"'), String(ifNoneMatch));
    // Chromium reports the page it kept (200); the wire carried 304.
    assert.deepEqual(sent, [200, 200, 304], "warmed, a HIT, then a 304");
    assert.deepEqual(errors, [], "no CSP violation or script error, after a HIT and a 304");
    await page.close();
  } finally {
    await app.close();
    await server.shutdown();
    kv.close();
  }
});
