/**
 * @module
 * The streamed Suspense section ends up in the page: React's inline scripts, allowed by the CSP
 * nonce, swap the fallback for the forecast.
 */
import assert from "node:assert/strict";
import { launchBrowser, pageErrors } from "../helpers/browser.ts";
import { startServer } from "../helpers/server.ts";

Deno.test("the streamed forecast replaces the fallback in the browser", async () => {
  await using server = await startServer();
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  const errors = pageErrors(page);

  await page.goto(server.origin + "/streaming");
  await page.getByText("Sunny, with a chance of hydration.").waitFor({ state: "visible" });
  assert.equal(await page.getByText("Loading the forecast…").count(), 0);
  assert.equal(await page.title(), "Streaming");
  assert.deepEqual(errors, [], "no CSP violation or script error");
});
