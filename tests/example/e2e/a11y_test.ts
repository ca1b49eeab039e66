/**
 * @module
 * Every example page passes axe-core (`helpers/axe.ts`) with zero violations, in Chromium, once it
 * is done (islands hydrated, Suspense streamed in): each page the example lists
 * (`routes/_examples.ts`, so a new example is covered with no edit here), the home page that lists
 * them, the pages behind sign-in (`/account`, `/board`, `/admin`) signed in as an admin, the
 * not-found page, the guestbook's and the login page's forms showing their errors, and the task
 * board with a task, a field error and its delete dialog open. Goes with the example.
 *
 * On its first day a team makes the home page, the document and the root layout its own (as
 * `files_test.ts` and `docs_test.ts` say too). Then the home page is no longer checked, and the
 * rules that judge the frame those two files give every page — its landmarks, the document's
 * language — are the team's business; every other rule still applies to the example's pages.
 */
import assert from "node:assert/strict";
import manifest from "@/_build/manifest.gen.ts";
import { createApp } from "shell/server";
import { EXAMPLES } from "@/routes/_examples.ts";
import { GUARDED_PATHS } from "../../../bench/pages.ts";
import { serveApp } from "../../helpers/app.ts";
import { axeViolations, describeViolations } from "../../helpers/axe.ts";
import { hydrated, launchBrowser, watchRequests } from "../../helpers/browser.ts";
import { PROJECT_ROOT } from "../../helpers/project_copy.ts";
import { addAdmin, ADMIN } from "../users.ts";
import { signInBrowser } from "./log_in.ts";

/** The rules about the frame `_app.tsx` and `_layout.tsx` give a page, not about the page. */
const FRAME_RULES = [
  "landmark-one-main",
  "region",
  "bypass",
  "html-has-lang",
  "html-lang-valid",
  "landmark-no-duplicate-banner",
  "landmark-no-duplicate-contentinfo",
  "landmark-no-duplicate-main",
];

// The example app itself, from its build, in this process, with its first admin.
const kv = await Deno.openKv(":memory:");
await addAdmin(kv);
const app = createApp(manifest, { root: PROJECT_ROOT, kv });

Deno.test("the example's pages pass axe", async (t) => {
  await using server = serveApp(app);
  await using browser = await launchBrowser();
  const context = await browser.newContext();
  const examples: string[] = EXAMPLES.map(([href]) => href);
  const home = await (await fetch(server.origin + "/")).text();
  const teamsOwn = !examples.every((href) => home.includes(`href="${href}"`));
  const skip = teamsOwn ? FRAME_RULES : [];
  const pages = [];
  for (const path of [...(teamsOwn ? [] : ["/"]), ...examples]) {
    if (GUARDED_PATHS.includes(path)) continue;
    const res = await fetch(server.origin + path);
    await res.body?.cancel();
    if (res.headers.get("content-type")?.startsWith("text/html")) pages.push(path);
  }
  assert.ok(pages.length >= 7, `example pages to check: ${pages}`);
  const paths = [...pages, "/no/such/page"];

  const check = async (
    path: string,
    before?: (page: import("playwright-core").Page) => Promise<void>,
  ) => {
    const page = await context.newPage();
    const requests = watchRequests(page);
    await page.goto(server.origin + path);
    // Not sent elsewhere (a guarded page to /login): the page named is the one checked.
    assert.equal(new URL(page.url()).pathname, path);
    await hydrated(page);
    await page.waitForFunction(() => !document.querySelector("template[id^='B:']"));
    await requests.quiet();
    await before?.(page);
    const violations = await axeViolations(page, skip);
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

  await signInBrowser(context, app, server.origin, ADMIN.email);
  for (const path of GUARDED_PATHS) await t.step(`${path}, signed in`, () => check(path));

  await t.step(
    "/board with a task, its form showing a field error, its delete dialog open, signed in",
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
