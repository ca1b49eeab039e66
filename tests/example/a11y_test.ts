/**
 * @module
 * Every example page passes axe-core (`helpers/axe.ts`) with zero violations, in Chromium, once it
 * is done (islands hydrated, Suspense streamed in): the home page and each page it links to (read
 * from the running app, so a new example is covered with no edit here), `/admin` with its
 * credentials, the not-found page, the guestbook's form showing its field errors, and the task
 * board with a task, a field error and its delete dialog open.
 */
import assert from "node:assert/strict";
import { examplePages, GUARDED_PATHS } from "../../bench/pages.ts";
import { projectApp, serveApp } from "../helpers/app.ts";
import { axeViolations, describeViolations } from "../helpers/axe.ts";
import { hydrated, launchBrowser, watchRequests } from "../helpers/browser.ts";

Deno.test("the example's pages pass axe", async (t) => {
  await using server = serveApp(projectApp());
  await using browser = await launchBrowser();
  const context = await browser.newContext({
    httpCredentials: { username: "admin", password: "admin" },
  });
  const paths = [...await examplePages(server.origin), ...GUARDED_PATHS, "/no/such/page"];
  assert.ok(paths.length > 8, `pages to check: ${paths}`);

  const check = async (
    path: string,
    before?: (page: import("playwright-core").Page) => Promise<void>,
  ) => {
    const page = await context.newPage();
    const requests = watchRequests(page);
    await page.goto(server.origin + path);
    await hydrated(page);
    await page.waitForFunction(() => !document.querySelector("template[id^='B:']"));
    await requests.quiet();
    await before?.(page);
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, describeViolations(path, violations));
    await page.close();
  };

  for (const path of paths) await t.step(path, () => check(path));

  await t.step(
    "/board with a task, its form showing a field error, its delete dialog open",
    () =>
      check("/board", async (page) => {
        await page.getByLabel("Title").fill("Check the contrast");
        await page.getByRole("button", { name: "Add" }).click();
        await page.locator("li.task").first().waitFor();
        await page.getByRole("button", { name: "Add" }).click();
        await page.locator(".field-error").waitFor();
        await page.locator("li.task").first().getByRole("button", { name: "Delete" }).click();
        await page.getByRole("dialog").waitFor();
      }),
  );

  await t.step(
    "/guestbook, its form showing field errors",
    () =>
      check("/guestbook", async (page) => {
        await page.getByRole("button", { name: "Sign" }).click();
        await page.locator(".field-error").first().waitFor();
      }),
  );
});
