/**
 * @module
 * Island props arrive in the browser with their types: the fixtures' `Props` island inspects its
 * props after hydration (in an effect, which only runs in the browser) and shows what it found.
 * Hostile strings arrive intact too, under the real CSP.
 */
import assert from "node:assert/strict";
import { launchBrowser, pageErrors } from "../helpers/browser.ts";
import { fixtureProject, PROP_STRINGS } from "../helpers/fixtures.ts";
import { startServer } from "../helpers/server.ts";

Deno.test("island props arrive typed in the browser", async () => {
  await using server = await startServer({}, { root: await fixtureProject() });
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  const errors = pageErrors(page);

  await page.goto(server.origin + "/props");
  await page.waitForFunction(() => document.getElementById("report")?.textContent !== "");
  const report = JSON.parse((await page.locator("#report").textContent())!);

  assert.deepEqual(report, {
    since: "2026-01-01T00:00:00.000Z",
    tags: ["react", "deno"],
    scores: [["ada", "bigint", "100000000000000000000"]],
    big: "18446744073709551616",
    home: "/home",
    missing: true,
    cycle: true,
    strings: PROP_STRINGS,
  });
  assert.equal(await page.evaluate(() => "__pwned" in window), false);
  assert.deepEqual(errors, []);
});
