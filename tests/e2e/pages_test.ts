/**
 * @module
 * The framework's test app in Chromium, from its real build served in-process: the island
 * hydrates, keeps its server-rendered children and responds to clicks; pages without islands load
 * no JavaScript at all (the island page, for contrast, does); the streamed section replaces its
 * fallback under the CSP; and `/admin`, behind `hono/basic-auth`, answers 401 without credentials
 * and, with them, its `WhoAmI` island's server action says `admin` — read through
 * `requestContext()`, set by the folder's middleware.
 */
import assert from "node:assert/strict";
import { fixtureApp, serveApp } from "../helpers/app.ts";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";

Deno.test("pages and islands in the browser", async (t) => {
  await using server = serveApp(await fixtureApp());
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
      "Rendered on the server, passed in as children.",
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
    for (const path of ["/", "/about", "/blog/first-post"]) {
      assert.deepEqual(await scriptsLoadedBy(path), { scripts: [], inline: 0 }, path);
    }
    const counter = await scriptsLoadedBy("/counter");
    assert.ok(counter.scripts.length > 0, "the island page does load its scripts");
    await fresh.close();
  });

  await t.step("the streamed section replaces the fallback in the browser", async () => {
    const page = await tabs.newPage();
    const errors = pageErrors(page);
    await page.goto(server.origin + "/streaming");
    await page.getByText("Streamed in after the shell.").waitFor({ state: "visible" });
    assert.equal(await page.getByText("Waiting for the stream…").count(), 0);
    assert.equal(await page.title(), "Streaming");
    assert.deepEqual(errors, [], "no CSP violation or script error");
    await page.close();
  });

  await t.step("/admin without credentials: 401", async () => {
    const res = await server.fetch("/admin");
    await res.body?.cancel();
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /^Basic realm="fixture"/);
    const wrong = await server.fetch("/admin", {
      headers: { Authorization: `Basic ${btoa("admin:guess")}` },
    });
    await wrong.body?.cancel();
    assert.equal(wrong.status, 401);
  });

  await t.step("/admin with credentials: the page, and whoAmI says admin", async () => {
    const context = await browser.newContext({
      httpCredentials: { username: "admin", password: "s3cret" },
    });
    const page = await context.newPage();
    const errors = pageErrors(page);
    const res = await page.goto(server.origin + "/admin");
    assert.equal(res?.status(), 200);
    assert.equal(await page.locator("strong").textContent(), "admin");
    await hydrated(page);
    await page.getByRole("button", { name: "Who am I?" }).click();
    await page.locator("output").waitFor();
    assert.equal(await page.locator("output").textContent(), "The action says: admin");
    assert.deepEqual(errors, []);
    await context.close();
  });
});
