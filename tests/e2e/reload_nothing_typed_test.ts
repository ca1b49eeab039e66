/**
 * @module
 * A page moving to a new build keeps only what there is to keep, in Chromium, on the test app. A
 * page with no form (`/counter`: an island, no field) whose island's chunk is gone while another
 * build serves reloads to it and keeps nothing: no kept-input entry in `sessionStorage` - before,
 * an empty one, which made the new page load the action client to put back nothing. A page whose
 * field holds what the user typed (`/wall`, its stream naming another build) still keeps it, and
 * the new page puts it back. What the tab stores, and each page it loads, reach the test as they
 * happen.
 */
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { Arrivals } from "../../lib/testing/arrivals.ts";
import { hydrated, launchBrowser } from "../helpers/browser.ts";
import { startServer } from "../helpers/server.ts";

const KEPT = "app-kept-input";
const RELOADED = "app-stale-reload";

/**
 * A new tab that tells the test every key its pages store in `sessionStorage` (`stored`) and each
 * page load (`loads`), across reloads; `until` waits for what they show.
 */
async function recordingTab(browser: Browser) {
  const page = await (await browser.newContext()).newPage();
  const stored: string[] = [];
  let loads = 0;
  const arrivals = new Arrivals();
  await page.exposeFunction("stored", (key: string) => {
    stored.push(key);
    arrivals.arrived();
  });
  page.on("load", () => {
    loads++;
    arrivals.arrived();
  });
  await page.addInitScript(() => {
    const set = Storage.prototype.setItem;
    Storage.prototype.setItem = function (key, value) {
      (globalThis as unknown as { stored(key: string): void }).stored(key);
      return set.call(this, key, value);
    };
  });
  const until = (done: () => boolean) =>
    arrivals.until(() => done() || undefined, 20_000, () => `loads ${loads}, stored ${stored}`);
  return { page, stored, loads: () => loads, until };
}

Deno.test("a reload to a new build keeps nothing for a page with nothing typed, what was typed otherwise", async () => {
  await using browser = await launchBrowser();
  const server = await startServer();
  try {
    // /counter: another build serves, and the page's island's chunk is gone - the first time.
    const counter = await recordingTab(browser);
    let gone = false;
    await counter.page.route(/\/_build$/, (route) => route.fulfill({ body: "another-build" }));
    await counter.page.route(/\.js$/, async (route) => {
      const island = await counter.page.evaluate(() =>
        document.querySelector("app-island")?.getAttribute("src") ?? ""
      ).catch(() => "");
      if (!gone && island && route.request().url().endsWith(island)) {
        gone = true;
        return await route.fulfill({ status: 404 });
      }
      await route.continue();
    });
    await counter.page.goto(`${server.origin}/counter`);
    await counter.until(() => counter.loads() >= 2);
    await hydrated(counter.page);
    assert.ok(gone, "the chunk was refused once");
    assert.ok(counter.stored.includes(RELOADED), `the reload is noted: ${counter.stored}`);
    assert.ok(!counter.stored.includes(KEPT), `nothing kept: ${counter.stored}`);
    assert.equal(await counter.page.locator("html[data-failure]").count(), 0);

    // /wall, a name typed, then its stream names another build (once): the reload keeps the name.
    const wall = await recordingTab(browser);
    await wall.page.goto(`${server.origin}/wall`);
    await hydrated(wall.page);
    await wall.page.getByLabel("Name").fill("typed before");
    await anotherBuildOnItsStream(wall);
    assert.ok(wall.stored.includes(KEPT), `kept: ${wall.stored}`);
    await wall.page.waitForFunction(() =>
      document.querySelector<HTMLInputElement>('input[name="name"]')?.value === "typed before"
    );
  } finally {
    await server.stop();
  }
});

Deno.test("a reload to a new build keeps a field the user emptied: the new page does not fill it again", async () => {
  await using browser = await launchBrowser();
  const server = await startServer();
  try {
    // /wall as a page whose server fills its field (a profile's name), on every load.
    const wall = await recordingTab(browser);
    await wall.page.route(`${server.origin}/wall`, async (route) => {
      const response = await route.fetch();
      const html = await response.text();
      const filled = html.replace(/<input name="name"\/?>/, '<input name="name" value="Ada"/>');
      assert.notEqual(filled, html, "the page has its name field");
      const headers = { ...response.headers() };
      delete headers["content-encoding"];
      delete headers["content-length"];
      await route.fulfill({ response, headers, body: filled });
    });
    await wall.page.goto(`${server.origin}/wall`);
    await hydrated(wall.page);
    const name = wall.page.getByLabel("Name");
    assert.equal(await name.inputValue(), "Ada");
    await name.fill("");
    await anotherBuildOnItsStream(wall);
    // Before, every field was empty, so nothing was kept and the new page showed "Ada" again.
    assert.ok(wall.stored.includes(KEPT), `kept: ${wall.stored}`);
    await wall.page.waitForFunction(
      () => document.querySelector<HTMLInputElement>('input[name="name"]')?.value === "",
      undefined,
      { timeout: 20_000 },
    );
  } finally {
    await server.stop();
  }
});

/**
 * The wall's stream names another build, once: opened again as the page is shown again, it makes
 * the page reload to that build. Resolves when the reloaded page has loaded.
 */
async function anotherBuildOnItsStream(wall: Awaited<ReturnType<typeof recordingTab>>) {
  let another = true;
  await wall.page.route(/\/wall\/events/, async (route) => {
    if (!another) return await route.continue();
    another = false;
    await route.fulfill({
      contentType: "text/event-stream",
      body: "retry: 60000\n\nevent: app-build\ndata: another-build\n\n",
    });
  });
  await wall.page.evaluate(() => {
    dispatchEvent(new PageTransitionEvent("pagehide"));
    dispatchEvent(new PageTransitionEvent("pageshow"));
  });
  await wall.until(() => wall.loads() >= 2);
}
