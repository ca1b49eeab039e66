/**
 * @module
 * The back/forward cache in Chromium (kept on, as browsers have it), on the framework's test app:
 * a page with an island and a live event stream, left for another page and come back to with the
 * back button, is restored from the cache (`pageshow` with `persisted`), not loaded again — the
 * island keeps its state, the stream, closed as the page left, opens again and gets what was
 * posted meanwhile and after.
 */
import assert from "node:assert/strict";
import { addPost } from "../fixture/routes/_wall/posts.ts";
import { fixtureApp, serveApp } from "../helpers/app.ts";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";

declare global {
  var stillHere: boolean | undefined;
  var restored: boolean | undefined;
}

Deno.test("a live page goes into the back/forward cache and comes back live", async () => {
  await using browser = await launchBrowser({ backForwardCache: true });
  const kv = await Deno.openKv(":memory:");
  const app = await fixtureApp({ kv });
  await using server = serveApp(app);
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = pageErrors(page);
  const streams: string[] = [];
  page.on("request", (req) => req.url().includes("/wall/events") && streams.push(req.url()));

  await page.goto(`${server.origin}/wall`);
  await hydrated(page);
  await page.evaluate(() => {
    globalThis.stillHere = true;
    addEventListener("pageshow", (event) => globalThis.restored = event.persisted);
  });
  // The island's own state: a message too long for a post says so.
  await page.fill("textarea[name=message]", "x".repeat(141));
  await page.locator("#too-long").waitFor();
  await addPost(kv, { name: "Ada", message: "Live before leaving" });
  await page.getByText("Live before leaving").waitFor();

  await page.click('header a[href="/"]');
  await page.waitForURL(`${server.origin}/`);
  await addPost(kv, { name: "Ada", message: "Posted while away" });
  // Restored from the cache, a page fires no `load`: the navigation is over once committed.
  await page.goBack({ waitUntil: "commit" });
  await page.waitForFunction(() => globalThis.restored !== undefined);
  const notRestored = await page.evaluate(() =>
    JSON.stringify(
      (performance.getEntriesByType("navigation")[0] as unknown as {
        notRestoredReasons: unknown;
      }).notRestoredReasons,
    )
  );
  assert.equal(await page.evaluate(() => globalThis.restored), true, notRestored);
  assert.equal(await page.evaluate(() => globalThis.stillHere), true, "the same document");
  assert.ok(await page.locator("#too-long").isVisible(), "the island kept its state");
  assert.equal((await page.inputValue("textarea[name=message]")).length, 141);

  await page.getByText("Posted while away").waitFor();
  await addPost(kv, { name: "Ada", message: "Live after coming back" });
  await page.getByText("Live after coming back").waitFor();
  // Opened, closed as the page left, opened again from the last post it had.
  assert.equal(streams.length, 2, streams.join("\n"));
  assert.match(streams[1], /since=1$/);
  assert.deepEqual(errors, []);
  await context.close();
  kv.close();
});
