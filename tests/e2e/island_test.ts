/**
 * @module
 * The example island in Chromium: it hydrates, keeps its server-rendered children, and responds
 * to clicks, with no error on the console.
 */
import assert from "node:assert/strict";
import { launchBrowser, pageErrors } from "../helpers/browser.ts";
import { startServer } from "../helpers/server.ts";

Deno.test("an island hydrates and responds to a click", async () => {
  await using server = await startServer();
  await using browser = await launchBrowser();
  const page = await browser.newPage();
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
});
