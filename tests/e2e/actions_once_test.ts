/**
 * @module
 * A second click on a form with JavaScript off, in Chromium, while the first post's answer is on
 * its way (held here until the second click, as a slow server or network holds it): the browser
 * sends the form again, the server gets both posts (its request log says so), and the wall shows
 * one post, on the page where the first landed. (A plain `dblclick` here cancels the first post
 * mid-body, which the server refuses with 400 before any action runs: no race to see.) A new
 * render of the form (the page after the post) posts again. With JavaScript on, a call whose
 * connection drops after the server ran it is sent again by the stub with its key: one post, the
 * first's result.
 */
import assert from "node:assert/strict";
import { fixtureProject } from "../helpers/fixtures.ts";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";
import { doubleClickHoldingFirstAnswer } from "../helpers/double_click.ts";
import { startServer } from "../helpers/server.ts";

Deno.test("a double click with JavaScript off posts once", async () => {
  const root = await fixtureProject();
  await using server = await startServer({ LOG_REQUESTS: "1" }, { root });
  await using browser = await launchBrowser();
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  const posts = () =>
    server.logs().filter((line) =>
      line.method === "POST" && String(line.path).startsWith("/_action/")
    );

  await page.goto(server.origin + "/wall");
  await page.getByLabel("Name").fill("Ada");
  await page.getByLabel("Message").fill("Clicked twice, posted once.");
  await doubleClickHoldingFirstAnswer(page, page.getByRole("button", { name: "Post" }));
  await server.waitForLog(() => posts().length >= 2);
  await page.getByRole("status").filter({ hasText: "Posted as Ada." }).waitFor();
  assert.equal(page.url(), server.origin + "/wall");
  assert.equal(await page.locator("q", { hasText: "Clicked twice, posted once." }).count(), 1);

  // The form rendered again is another submission.
  await page.getByLabel("Name").fill("Ada");
  await page.getByLabel("Message").fill("Clicked twice, posted once.");
  await page.getByRole("button", { name: "Post" }).click();
  await server.waitForLog(() => posts().length >= 3);
  await page.getByRole("status").filter({ hasText: "Posted as Ada." }).waitFor();
  assert.equal(await page.locator("q", { hasText: "Clicked twice, posted once." }).count(), 2);
  assert.deepEqual(posts().map((line) => line.status), [303, 303, 303]);
  await context.close();
});

Deno.test("a call whose connection dropped is sent again, and posts once", async () => {
  const root = await fixtureProject();
  await using server = await startServer({ LOG_REQUESTS: "1" }, { root });
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  const errors = pageErrors(page);
  const posts = () =>
    server.logs().filter((line) =>
      line.method === "POST" && String(line.path).startsWith("/_action/")
    );
  await page.goto(server.origin + "/wall");
  await hydrated(page);
  // The first call reaches the server and runs; its connection drops before the answer.
  let seen = 0;
  await page.route("**/_action/**", async (route) => {
    if (seen++ > 0) return await route.continue();
    const response = await route.fetch();
    await response.dispose();
    await route.abort("connectionreset");
  });
  await page.getByLabel("Name").fill("Grace");
  await page.getByLabel("Message").fill("Sent again after a drop.");
  await page.getByRole("button", { name: "Post" }).click();
  await page.getByRole("status").filter({ hasText: "Posted as Grace." }).waitFor();
  await server.waitForLog(() => posts().length >= 2);
  assert.equal(await page.locator("q", { hasText: "Sent again after a drop." }).count(), 1);
  assert.deepEqual(posts().map((line) => line.status), [200, 200]);
  // Chromium's own line for the dropped request, and nothing else.
  assert.deepEqual(errors.filter((error) => !/ERR_CONNECTION_RESET/.test(error)), []);
  await page.close();
});
