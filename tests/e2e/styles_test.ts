/**
 * @module
 * Stylesheets the app imports, in Chromium, with JavaScript off and on, on a built copy of the
 * project with an app of the test's own (`helpers/style_fixtures.ts`): a global stylesheet, a CSS
 * module (its class names scoped) and a Tailwind class style the page that imports them; a page
 * that does not import them carries none of them, though it uses the same class names; the
 * stylesheets are linked in `<head>` once each, `_app`'s first, then the layout's, the page's and
 * the island's, and apply in that order; an island's stylesheet is in the server's HTML of the page
 * that renders it (no unstyled flash while its script loads), and not in one that only imports it.
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { builtCopy } from "../helpers/built_copy.ts";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";
import { startServer } from "../helpers/server.ts";
import { CASCADE, STYLE_FILES } from "../helpers/style_fixtures.ts";

const root = await builtCopy("styles", STYLE_FILES);

/** The page's stylesheet links in `<head>`, each named by the marker its stylesheet carries. */
async function linkedSheets(page: Page): Promise<string[]> {
  const hrefs = await page.evaluate(() =>
    [...document.head.querySelectorAll<HTMLLinkElement>("link[rel=stylesheet]")].map((l) => l.href)
  );
  return await Promise.all(hrefs.map(async (href) => {
    const css = await (await fetch(href)).text();
    const names = [...css.matchAll(/--sheet-([\w-]+)/g)].map(([, name]) => name);
    assert.equal(names.length, 1, `${href} holds one stylesheet: ${names}`);
    return names[0];
  }));
}

function style(page: Page, selector: string, property: string): Promise<string> {
  return page.evaluate(
    ([selector, property]) =>
      getComputedStyle(document.querySelector(selector)!).getPropertyValue(property),
    [selector, property],
  );
}

async function check(browser: Browser, javaScriptEnabled: boolean, origin: string) {
  const context = await browser.newContext({ javaScriptEnabled });
  try {
    const page = await context.newPage();
    const errors = pageErrors(page);
    await page.goto(`${origin}/styled`);
    if (javaScriptEnabled) await hydrated(page);

    assert.deepEqual(await linkedSheets(page), CASCADE, "linked once each, in order");
    assert.equal(await style(page, "#cascade", "order"), "7", "applied in that order");

    assert.equal(await style(page, "#global", "color"), "rgb(1, 2, 3)", "a global import");
    assert.equal(await style(page, ".layout-probe", "padding-top"), "11px", "the layout's");
    const moduleClass = await page.getAttribute("#module", "class");
    assert.match(moduleClass!, /^probe_[\w-]+ card_[\w-]+$/, "a CSS module's names are scoped");
    assert.equal(await style(page, "#module", "color"), "rgb(4, 5, 6)", "a CSS module");
    assert.equal(await style(page, "#tailwind", "color"), "rgb(7, 8, 9)", "a Tailwind class");
    assert.equal(await style(page, "#tailwind", "letter-spacing"), "5px");

    // `.card` in three files: each element gets its own file's rules, and only those.
    assert.equal(await style(page, "#global", "outline-style"), "dotted");
    assert.equal(await style(page, "#module", "outline-color"), "rgb(9, 9, 9)");
    assert.equal(await style(page, "#module", "outline-style"), "none");
    const island = "#first span";
    assert.equal(await style(page, island, "outline-color"), "rgb(8, 8, 8)");
    assert.notEqual(await page.getAttribute(island, "class"), moduleClass);

    // The island's own stylesheet came with the server's HTML, for both of its renders.
    assert.equal(await style(page, "#first", "color"), "rgb(2, 4, 6)");
    assert.equal(await style(page, "#second", "color"), "rgb(2, 4, 6)");
    assert.equal(await style(page, island, "color"), "rgb(3, 2, 1)", "Tailwind, in an island");
    if (javaScriptEnabled) {
      await page.click("#first button");
      await page.waitForSelector("#first button:text('clicked 1')");
      assert.equal(await style(page, "#first", "color"), "rgb(2, 4, 6)");
    }

    await page.goto(`${origin}/styled/other`);
    assert.deepEqual(await linkedSheets(page), ["app", "shared", "layout"], "no island here");

    await page.goto(`${origin}/plain`);
    assert.deepEqual(await linkedSheets(page), ["app"], "only _app's");
    assert.equal(await style(page, "#global", "color"), "rgb(0, 0, 0)");
    assert.equal(await style(page, "#global", "outline-style"), "none");
    assert.equal(await style(page, "#tailwind", "color"), "rgb(0, 0, 0)");
    assert.equal(await style(page, "#tailwind", "letter-spacing"), "normal");
    assert.equal(await style(page, "#cascade", "order"), "1");
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
}

Deno.test("imported stylesheets style exactly the pages that import them, in order, JS off and on", async (t) => {
  await using server = await startServer({}, { root });
  await using browser = await launchBrowser();
  await t.step("JavaScript off", () => check(browser, false, server.origin));
  await t.step("JavaScript on", () => check(browser, true, server.origin));
});
