/**
 * @module
 * The example's pages in Chromium, against the app from its real build served in-process: the
 * island hydrates, keeps its server-rendered children and responds to clicks; pages without
 * islands load no JavaScript at all (the island page, for contrast, does); the streamed forecast
 * replaces its fallback under the CSP. (`/admin`, behind `requireRole("admin")`, and the other
 * pages of users and sessions: `tests/example/users_test.ts`.)
 */
import assert from "node:assert/strict";
import { projectApp, serveApp } from "../helpers/app.ts";
import { launchBrowser, pageErrors } from "../helpers/browser.ts";

Deno.test("the example's pages in the browser", async (t) => {
  await using server = serveApp(projectApp());
  await using browser = await launchBrowser();
  // Pages share a context: a context costs Chromium more than a page does.
  const tabs = await browser.newContext();

  await t.step("an island hydrates and responds to a click", async () => {
    const page = await tabs.newPage();
    const errors = pageErrors(page);
    await page.goto(server.origin + "/counter");
    await page.getByRole("button", { name: "Increment" }).click();
    await page.waitForFunction(() => document.querySelector("output")?.textContent === "4");
    await page.getByRole("button", { name: "Decrement" }).click();
    await page.getByRole("button", { name: "Decrement" }).click();
    await page.waitForFunction(() => document.querySelector("output")?.textContent === "2");

    assert.deepEqual(await page.locator("dd").allTextContents(), [
      "2026-01-01T00:00:00.000Z",
      "react, deno",
      "ada: 100000000000000000000",
      "127.0.0.1",
    ]);
    const children = page.locator("app-island island-children p");
    assert.equal(
      await children.textContent(),
      "These words were rendered on the server and passed in as children.",
    );
    assert.deepEqual(errors, []);
    await page.close();
  });

  await t.step("island-free pages load no script", async () => {
    // A context of their own, its cache empty: the island page, last, loads its scripts anew.
    const fresh = await browser.newContext();
    const scriptsLoadedBy = async (path: string) => {
      const page = await fresh.newPage();
      const scripts: string[] = [];
      page.on("request", (req) => req.resourceType() === "script" && scripts.push(req.url()));
      await page.goto(server.origin + path, { waitUntil: "load" });
      const inline = await page.evaluate(() => document.scripts.length);
      await page.close();
      return { scripts, inline };
    };
    for (const path of ["/", "/about", "/blog/hello-world"]) {
      assert.deepEqual(await scriptsLoadedBy(path), { scripts: [], inline: 0 }, path);
    }
    const counter = await scriptsLoadedBy("/counter");
    assert.ok(counter.scripts.length > 0, "the island page does load its scripts");
    await fresh.close();
  });

  await t.step("the streamed forecast replaces the fallback in the browser", async () => {
    const page = await tabs.newPage();
    const errors = pageErrors(page);
    await page.goto(server.origin + "/streaming");
    await page.getByText("Sunny, with a chance of hydration.").waitFor({ state: "visible" });
    assert.equal(await page.getByText("Loading the forecast…").count(), 0);
    assert.equal(await page.title(), "Streaming");
    assert.deepEqual(errors, [], "no CSP violation or script error");
    await page.close();
  });
});
