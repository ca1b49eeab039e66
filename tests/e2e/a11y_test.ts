/**
 * @module
 * The framework's own screens pass axe-core (`helpers/axe.ts`) with zero violations, in Chromium,
 * against the tests' own app (`error_fixtures.ts`): the server-side failure screen (a response, and
 * over a page whose boundary failed after the shell), the client-side one (an island that takes its
 * page down), the not-found page, an `_error.tsx` page, and an error shown in place after the shell.
 */
import assert from "node:assert/strict";
import { axeViolations, describeViolations } from "../helpers/axe.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { errorsProject } from "../helpers/error_fixtures.ts";
import { startServer } from "../helpers/server.ts";

const PAGES = [
  {
    what: "the server-side failure screen",
    path: "/screens/server",
    ready: "html[data-failure=server]",
  },
  {
    what: "the client-side failure screen",
    path: "/screens/client",
    ready: "html[data-failure=client]",
  },
  { what: "the not-found page", path: "/no/such/page", ready: "h1" },
  { what: "an _error.tsx page", path: "/errors/private", ready: ".board-error" },
  { what: "an error in place after the shell", path: "/errors/late", ready: "main .board-error" },
];

Deno.test("the failure screens and error pages pass axe", async (t) => {
  await using browser = await launchBrowser();
  const root = await errorsProject();
  await using server = await startServer({ NODE_ENV: "production" }, { root });
  const context = await browser.newContext();
  for (const { what, path, ready } of PAGES) {
    await t.step(what, async () => {
      const page = await context.newPage();
      await page.goto(server.origin + path);
      await page.waitForSelector(ready);
      const violations = await axeViolations(page);
      assert.equal(violations.length, 0, describeViolations(path, violations));
      await page.close();
    });
  }
});
