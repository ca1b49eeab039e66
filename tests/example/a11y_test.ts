/**
 * @module
 * Every example page passes axe-core (`helpers/axe.ts`) with zero violations, in Chromium, once it
 * is done (islands hydrated, Suspense streamed in): the home page and each page it links to (read
 * from the running app, so a new example is covered with no edit here), the pages behind sign-in
 * (`/account`, `/admin`) signed in as an admin, the not-found page, and the guestbook's and the
 * login page's forms showing their errors.
 */
import assert from "node:assert/strict";
import { examplePages, GUARDED_PATHS } from "../../bench/pages.ts";
import { projectApp, serveApp } from "../helpers/app.ts";
import { axeViolations, describeViolations } from "../helpers/axe.ts";
import { hydrated, launchBrowser, watchRequests } from "../helpers/browser.ts";
import { addAdmin, ADMIN, logIn } from "./users.ts";

Deno.test("the example's pages pass axe", async (t) => {
  using kv = await Deno.openKv(":memory:");
  await addAdmin(kv);
  await using server = serveApp(projectApp({ kv }));
  await using browser = await launchBrowser();
  const context = await browser.newContext();
  const paths = [...await examplePages(server.origin), "/no/such/page"];
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
    "/login, its form showing an error",
    () =>
      check("/login", async (page) => {
        await page.getByLabel("Email").fill("nobody@example.com");
        await page.getByLabel("Password").fill("wrong password");
        await page.getByRole("button", { name: "Log in" }).click();
        await page.getByRole("alert").waitFor();
      }),
  );

  const signedIn = await context.newPage();
  await logIn(signedIn, server.origin, ADMIN);
  await signedIn.close();
  for (const path of GUARDED_PATHS) await t.step(`${path}, signed in`, () => check(path));

  await t.step(
    "/guestbook, its form showing field errors",
    () =>
      check("/guestbook", async (page) => {
        await page.getByRole("button", { name: "Sign" }).click();
        await page.locator(".field-error").first().waitFor();
      }),
  );
});
