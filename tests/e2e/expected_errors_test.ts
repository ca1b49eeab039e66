/**
 * @module
 * Expected errors as a person sees them in Chromium, with JavaScript on and off, against the tests'
 * own app (`error_fixtures.ts`): a refusing page and middleware give the folder's `_error.tsx` with
 * the status; a refusal after the shell takes its boundary's place; an island's action call rejects
 * with an `ActionError` carrying the thrown status and message; a form posted without JavaScript,
 * or refused by the middleware in front of its action, lands on the page's `_error.tsx`. None of it
 * writes an error line.
 */
import assert from "node:assert/strict";
import type { BrowserContext } from "playwright-core";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";
import { errorsProject, MEMBERS_ONLY, TAKEN } from "../helpers/error_fixtures.ts";
import { startServer } from "../helpers/server.ts";

Deno.test("expected errors in the browser", async (t) => {
  await using browser = await launchBrowser();
  const root = await errorsProject();
  await using server = await startServer({ NODE_ENV: "production" }, { root });
  const contexts: Record<string, BrowserContext> = {
    "JavaScript on": await browser.newContext(),
    "JavaScript off": await browser.newContext({ javaScriptEnabled: false }),
  };

  for (const [mode, context] of Object.entries(contexts)) {
    await t.step(`${mode}: a page that refuses shows the folder's _error.tsx`, async () => {
      const page = await context.newPage();
      const res = await page.goto(server.origin + "/errors/private");
      assert.equal(res?.status(), 403);
      assert.equal(await page.title(), MEMBERS_ONLY);
      assert.equal(await page.locator("main .board-error h1").textContent(), MEMBERS_ONLY);
      assert.match((await page.locator(".board-error p").textContent())!, /^Error 403\./);
      // Inside the example's layouts.
      assert.equal(await page.getByRole("link", { name: "Home" }).count(), 1);
      await page.close();
    });

    await t.step(`${mode}: middleware that refuses, the same`, async () => {
      await context.addCookies([{ name: "refuse", value: "1", url: server.origin }]);
      const page = await context.newPage();
      const res = await page.goto(server.origin + "/errors/late");
      assert.equal(res?.status(), 403);
      assert.equal(await page.locator(".board-error h1").textContent(), MEMBERS_ONLY);
      await context.clearCookies();
      await page.close();
    });

    await t.step(
      `${mode}: a form whose action refuses lands on its page's _error.tsx`,
      async () => {
        const page = await context.newPage();
        await page.goto(server.origin + "/errors/actions");
        const [res] = await Promise.all([
          page.waitForResponse((r) => r.url().includes("/_action/")),
          page.getByRole("button", { name: "Archive without JavaScript" }).click(),
        ]);
        assert.equal(res.status(), 409);
        await page.locator(".board-error h1").waitFor();
        assert.equal(await page.locator(".board-error h1").textContent(), TAKEN);
        assert.match((await page.locator(".board-error p").textContent())!, /^Error 409\./);
        await page.close();
      },
    );

    await t.step(`${mode}: …and so when the middleware in front of it refuses`, async () => {
      const page = await context.newPage();
      await page.goto(server.origin + "/errors/actions");
      await context.addCookies([{ name: "refuse", value: "1", url: server.origin }]);
      const [res] = await Promise.all([
        page.waitForResponse((r) => r.url().includes("/_action/")),
        page.getByRole("button", { name: "Fine without JavaScript" }).click(),
      ]);
      assert.equal(res.status(), 403);
      await page.locator(".board-error h1").waitFor();
      assert.equal(await page.locator(".board-error h1").textContent(), MEMBERS_ONLY);
      await context.clearCookies();
      await page.close();
    });
  }

  await t.step("JavaScript on: a refusal after the shell takes its boundary's place", async () => {
    const page = await contexts["JavaScript on"].newPage();
    const errors = pageErrors(page);
    const res = await page.goto(server.origin + "/errors/late");
    assert.equal(res?.status(), 200, "the status went out with the shell");
    const shown = page.locator("main .board-error");
    await shown.waitFor();
    assert.equal(await shown.locator("h1").textContent(), TAKEN);
    // In place: between the heading and what follows the boundary, the fallback gone.
    const order = await page.locator("main").evaluate((main) =>
      [...main.querySelectorAll("h1, p")].map((el) => el.textContent)
    );
    assert.deepEqual(order, ["Tasks", TAKEN, "Error 409. Back to the start", "After the tasks"]);
    assert.equal(await page.getByText("Loading the tasks…").count(), 0);
    assert.equal(await page.title(), "Tasks", "the page keeps its title");
    assert.deepEqual(errors, []);
    await page.close();
  });

  await t.step("JavaScript off: after the shell, the message still shows", async () => {
    const page = await contexts["JavaScript off"].newPage();
    const res = await page.goto(server.origin + "/errors/late");
    assert.equal(res?.status(), 200);
    await page.locator(".board-error h1").waitFor();
    assert.equal(await page.locator(".board-error h1").textContent(), TAKEN);
    assert.ok(await page.locator(".board-error h1").isVisible());
    await page.close();
  });

  await t.step("JavaScript on: an island's call rejects with the ActionError", async () => {
    const page = await contexts["JavaScript on"].newPage();
    const errors = pageErrors(page);
    await page.goto(server.origin + "/errors/actions");
    await hydrated(page);
    await page.getByRole("button", { name: "Archive", exact: true }).click();
    await page.waitForFunction(() => document.getElementById("said")?.textContent !== "");
    assert.equal(await page.locator("#said").textContent(), `409 ${TAKEN}`);
    // The middleware in front of an action, the same.
    await contexts["JavaScript on"].addCookies([
      { name: "refuse", value: "1", url: server.origin },
    ]);
    await page.getByRole("button", { name: "Fine", exact: true }).click();
    await page.waitForFunction(() =>
      document.getElementById("said")?.textContent?.startsWith("403")
    );
    assert.equal(await page.locator("#said").textContent(), `403 ${MEMBERS_ONLY}`);
    await contexts["JavaScript on"].clearCookies();
    assert.equal(await page.locator("html[data-failure]").count(), 0);
    assert.deepEqual(errors.filter((e) => !e.includes("status of 40")), []);
    await page.close();
  });

  await t.step("none of it was a failure: no error line", () => {
    assert.deepEqual(server.logs().filter((line) => line.level === "error"), []);
  });
});
