import assert from "node:assert/strict";
import { launchBrowser } from "../helpers/browser.ts";
import { startServer } from "../helpers/server.ts";

Deno.test("an island hydrates and responds to a click", async () => {
  await using server = await startServer();
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(server.origin + "/counter");
  await page.getByRole("button", { name: "Increment" }).click();
  await page.waitForFunction(() => document.querySelector("output")?.textContent === "4");
  assert.equal(await page.locator("dd").first().textContent(), "2026-01-01T00:00:00.000Z");
  assert.deepEqual(errors, []);
});
