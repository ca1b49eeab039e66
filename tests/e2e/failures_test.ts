/**
 * @module
 * Failures as a person sees them in Chromium, against a copy of the project with failing islands
 * and routes: a page that breaks while loading gives way to the client-side screen, an error in
 * an event handler leaves the page alone, and a failure after the shell ends on the server-side
 * screen with the digest from the server's log.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { launchBrowser, watchRequests } from "../helpers/browser.ts";
import { FAILURE_SECRET as SECRET, fixtureProject } from "../helpers/fixtures.ts";
import { startServer } from "../helpers/server.ts";

const CLIENT_MESSAGE =
  "Application error: a client-side exception has occurred while loading 127.0.0.1 (see the browser console for more information).";
const SERVER_MESSAGE =
  "Application error: a server-side exception has occurred while loading 127.0.0.1 (see the server logs for more information).";

/** Every console error and uncaught page error, as text. */
function watchErrors(page: Page): { console: string[]; uncaught: string[] } {
  const seen = { console: [] as string[], uncaught: [] as string[] };
  page.on("console", (msg) => msg.type() === "error" && seen.console.push(msg.text()));
  page.on("pageerror", (error) => seen.uncaught.push(error.message));
  return seen;
}

async function screen(page: Page, side: "client" | "server") {
  await page.waitForSelector(`html[data-failure="${side}"] main [role=alert]`);
  return {
    message: await page.locator("h1").textContent(),
    digest: await page.evaluate(() => document.querySelector("main code")?.textContent ?? null),
    title: await page.title(),
    // The screen's own style applies: its body is a centring flex box.
    styled: await page.evaluate(() => getComputedStyle(document.body).display === "flex"),
  };
}

Deno.test("failures in the browser", async (t) => {
  // One browser for the whole file: launching one costs more than most steps. Its pages share a
  // context, one with JavaScript and one without: a context costs Chromium more than a page does.
  await using browser = await launchBrowser();
  const tabs = await browser.newContext();
  const noScript = await browser.newContext({ javaScriptEnabled: false });

  await t.step("in production", async (t) => {
    const root = await fixtureProject();
    await using server = await startServer({ NODE_ENV: "production" }, { root });

    await t.step("an island whose chunk is gone: the client-side screen", async () => {
      const page = await tabs.newPage();
      const errors = watchErrors(page);
      await page.goto(server.origin + "/island/lost");
      const shown = await screen(page, "client");
      assert.equal(shown.message, CLIENT_MESSAGE);
      assert.equal(shown.digest, null);
      assert.equal(shown.title, "Application error");
      assert.ok(shown.styled);
      assert.ok(errors.console.some((text) => /dynamically imported module/.test(text)));
      await page.close();
    });

    await t.step("an island that throws while rendering: the client-side screen", async () => {
      const page = await tabs.newPage();
      const errors = watchErrors(page);
      await page.goto(server.origin + "/island/render");
      const shown = await screen(page, "client");
      assert.equal(shown.message, CLIENT_MESSAGE);
      assert.ok(errors.console.some((text) => text.includes("island render failure")));
      assert.equal(await page.locator("main pre").count(), 0, "no details in production");
      await page.close();
    });

    await t.step("an error in an event handler leaves the page as it is", async () => {
      const page = await tabs.newPage();
      const errors = watchErrors(page);
      await page.goto(server.origin + "/island/click");
      await page.getByRole("button", { name: "Clicked 0" }).click();
      await page.getByRole("button", { name: "Clicked 1" }).waitFor();
      assert.deepEqual(errors.uncaught, ["click handler failure"]);
      await page.getByRole("button", { name: "Clicked 1" }).click();
      await page.getByRole("button", { name: "Clicked 2" }).waitFor();
      assert.equal(await page.locator("h1").textContent(), "Clicks");
      assert.equal(await page.locator("html[data-failure]").count(), 0);
      await page.close();
    });

    await t.step("a hydration mismatch React recovers from leaves the page as it is", async () => {
      const page = await tabs.newPage();
      const errors = watchErrors(page);
      await page.goto(server.origin + "/island/mismatch");
      await page.waitForFunction(() => document.getElementById("side")?.textContent === "browser");
      assert.equal(await page.locator("h1").textContent(), "Two truths");
      assert.equal(await page.locator("html[data-failure]").count(), 0);
      // Production React names the mismatch by its code: #418, "Hydration failed…".
      assert.ok(
        errors.console.some((text) => text.includes("React error #418")),
        errors.console[0],
      );
      await page.close();
    });

    for (const path of ["/fail/stream", "/fail/stream-island"]) {
      await t.step(`a failure after the shell (${path}): the server screen stays`, async () => {
        const page = await tabs.newPage();
        const errors = watchErrors(page);
        const requests = watchRequests(page);
        await page.goto(server.origin + path);
        const shown = await screen(page, "server");
        assert.equal(shown.message, SERVER_MESSAGE);
        assert.equal(shown.title, "Application error");
        assert.ok(shown.styled);
        const line = await server.waitForLog((l) => l.path === path && l.level === "error");
        assert.equal(shown.digest, line.digest);
        // Once what React or the islands still had scheduled has run, the screen is what remains.
        await requests.quiet();
        assert.equal(
          await page.locator("html[data-failure=server] h1").textContent(),
          SERVER_MESSAGE,
        );
        assert.ok(!(await page.content()).includes(SECRET));
        assert.deepEqual(errors.uncaught, []);
        await page.close();
      });
    }

    await t.step("a failure after the shell, without JavaScript: the server screen", async () => {
      const page = await noScript.newPage();
      await page.goto(server.origin + "/fail/stream");
      const screen = page.locator("main [role=alert]");
      await screen.waitFor();
      assert.equal(await screen.locator("h1").textContent(), SERVER_MESSAGE);
      const line = await server.waitForLog((l) => l.path === "/fail/stream" && l.level === "error");
      assert.equal(await screen.locator("code").textContent(), line.digest);
      // The page and its fallbacks are hidden: the screen is all there is to see.
      assert.ok(await screen.isVisible());
      for (const text of ["Before the failure", "Loading…", "Loading slowly…"]) {
        assert.equal(await page.getByText(text, { exact: true }).isVisible(), false, text);
      }
      assert.ok(!(await page.content()).includes(SECRET));
      await page.close();
    });

    await t.step("the server screen needs no JavaScript", async () => {
      const page = await noScript.newPage();
      const res = await page.goto(server.origin + "/fail/page");
      assert.equal(res?.status(), 500);
      assert.equal(await page.locator("h1").textContent(), SERVER_MESSAGE);
      assert.match((await page.locator("main code").textContent())!, /^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
      await page.close();
    });
  });

  await t.step("in development the client-side screen shows the error", async () => {
    const root = await fixtureProject();
    await using server = await startServer({ NODE_ENV: "development" }, { root });
    const page = await tabs.newPage();
    await page.goto(server.origin + "/island/render");
    const shown = await screen(page, "client");
    assert.equal(shown.message, CLIENT_MESSAGE);
    const details = await page.locator("main pre").textContent();
    assert.match(details!, /^Error: island render failure\n\s+at BrowserOnlyBug /);
  });
});
