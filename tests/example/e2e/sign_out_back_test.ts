/**
 * @module
 * Going Back after signing out, in Chromium, on the example's `/account` (`private, no-cache`, so
 * the browser may keep it): the signed-in page must not come back. With the back/forward cache on
 * (as browsers have it) and JavaScript on, the restored page sees its session's mark gone and
 * loads anew; with that cache off, Back would take the page from the HTTP cache, which the
 * sign-out's `Clear-Site-Data: "cache"` emptied — with JavaScript off too. Both buttons: "Log out"
 * and "Log out everywhere".
 */
import assert from "node:assert/strict";
import manifest from "@/_build/manifest.gen.ts";
import { createApp } from "shell/server";
import { serveApp } from "../../helpers/app.ts";
import { launchBrowser, pageErrors } from "../../helpers/browser.ts";
import { PROJECT_ROOT } from "../../helpers/project_copy.ts";
import { addAdmin, ADMIN } from "../users.ts";
import { signInBrowser } from "./log_in.ts";

const CASES = [
  { backForwardCache: true, script: true },
  { backForwardCache: false, script: true },
  { backForwardCache: false, script: false },
];

for (const { backForwardCache, script } of CASES) {
  Deno.test(
    `Back after signing out shows no signed-in page (back/forward cache ${
      backForwardCache ? "on" : "off"
    }, JavaScript ${script ? "on" : "off"})`,
    async (t) => {
      using kv = await Deno.openKv(":memory:");
      await addAdmin(kv);
      const app = createApp(manifest, { root: PROJECT_ROOT, kv });
      await using server = serveApp(app);
      await using browser = await launchBrowser({ backForwardCache });
      for (const button of ["Log out", "Log out everywhere"]) {
        await t.step(button, async () => {
          const context = await browser.newContext({ javaScriptEnabled: script });
          await signInBrowser(context, app, server.origin, ADMIN.email);
          const page = await context.newPage();
          const errors = pageErrors(page);
          await page.goto(server.origin + "/");
          const account = await page.goto(server.origin + "/account");
          assert.equal(account?.headers()["cache-control"], "private, no-cache");
          assert.ok((await page.textContent("body"))?.includes(ADMIN.email));
          // The sign-out's own answer, awaited: its headers are read from the browser after the
          // page has moved on (a listener that stored them could still be waiting for them).
          const signOut = page.waitForResponse((res) => res.request().method() === "POST");
          await Promise.all([
            page.waitForURL((url) => url.pathname !== "/account"),
            page.getByRole("button", { name: button, exact: true }).click(),
          ]);
          assert.equal(await (await signOut).headerValue("clear-site-data"), '"cache"');

          await page.goBack({ waitUntil: "commit" });
          // Restored and checked, or loaded anew: either way it ends on the login page.
          await page.waitForURL((url) => url.pathname === "/login");
          await page.getByRole("heading", { name: "Log in" }).waitFor();
          assert.equal((await page.textContent("body"))?.includes(ADMIN.email), false);
          assert.deepEqual(errors, []);
          await context.close();
        });
      }
    },
  );
}
