/**
 * @module
 * `deno task dev` and the stylesheets the app imports, in Chromium, on a copy of the project with
 * an app of the test's own (`helpers/style_fixtures.ts`): an edit of a global stylesheet, of a CSS
 * module's rule, and a Tailwind class added to an island's component each show in the open page
 * without a reload, the island's state kept; a reload then links the new stylesheets; a class added
 * to a CSS module (a new name the server renders) reloads the page.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";
import { mark, marked, reloadsAfter, SHOWN_MS } from "../helpers/dev_page.ts";
import { copyProject } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";
import { STYLE_FILES } from "../helpers/style_fixtures.ts";

/** Resolves once `selector`'s computed `property` is `value`, polled each frame. */
function styled(page: Page, selector: string, property: string, value: string) {
  return page.waitForFunction(
    ([selector, property, value]) =>
      getComputedStyle(document.querySelector(selector)!).getPropertyValue(property) === value,
    [selector, property, value],
    { polling: "raf", timeout: SHOWN_MS },
  );
}

Deno.test("deno task dev: a stylesheet edit shows without a reload, island state kept", async (t) => {
  await using copy = await copyProject();
  for (const [path, source] of Object.entries(STYLE_FILES)) await copy.write(path, source);
  await using server = await startServer({ NODE_ENV: "development" }, {
    root: copy.root,
    script: "lib/cli/dev.ts",
  });
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  const errors = pageErrors(page);
  await page.goto(`${server.origin}/styled`);
  await hydrated(page);
  for (let i = 0; i < 3; i++) await page.click("#first button");
  await page.waitForSelector("#first button:text('clicked 3')");
  await mark(page);
  const append = async (path: string, css: string) =>
    await copy.write(path, await Deno.readTextFile(join(copy.root, path)) + css);
  const stateKept = async () => {
    assert.ok(await marked(page), "the page did not reload");
    assert.equal(await page.textContent("#first button"), "clicked 3");
  };

  await t.step("a global stylesheet", async () => {
    const shown = styled(page, "#global", "color", "rgb(10, 20, 30)");
    await append("routes/styled/page.css", ".global-probe { color: rgb(10, 20, 30); }\n");
    await shown;
    await stateKept();
  });

  await t.step("a rule of a CSS module", async () => {
    const shown = styled(page, "#first", "color", "rgb(40, 50, 60)");
    await append("islands/StyledIsland.module.css", ".box { color: rgb(40, 50, 60); }\n");
    await shown;
    await stateKept();
  });

  await t.step("a Tailwind class added to an island's component", async () => {
    const island = "islands/StyledIsland.tsx";
    const source = await Deno.readTextFile(join(copy.root, island));
    const shown = styled(page, "#first button", "background-color", "rgb(70, 80, 90)");
    await copy.write(
      island,
      source.replace(
        '<button type="button"',
        '<button className="bg-[rgb(70,80,90)]" type="button"',
      ),
    );
    await shown;
    await stateKept();
  });

  await t.step("a reload links the new stylesheets", async () => {
    await page.reload();
    await hydrated(page);
    assert.equal(await page.textContent("#first button"), "clicked 0");
    for (
      const [selector, property, value] of [
        ["#global", "color", "rgb(10, 20, 30)"],
        ["#first", "color", "rgb(40, 50, 60)"],
        ["#first button", "background-color", "rgb(70, 80, 90)"],
      ]
    ) {
      assert.equal(
        await page.evaluate(
          ([s, p]) => getComputedStyle(document.querySelector(s)!).getPropertyValue(p),
          [selector, property],
        ),
        value,
      );
    }
    const links = await page.locator("link[rel=stylesheet]").count();
    assert.equal(links, 7, "each stylesheet once");
  });

  await t.step("a new class name in a CSS module reloads the page", async () => {
    await reloadsAfter(
      page,
      () => append("routes/styled/page.module.css", ".added { color: rgb(1, 1, 1); }\n"),
    );
  });
  assert.deepEqual(errors, []);
});
