/**
 * @module
 * The shipped middleware example, `/admin` behind `hono/basic-auth`, in Chromium against the app
 * from its real build (served in-process): 401 without credentials, the page with `admin:admin`,
 * and its `WhoAmI` island's server action answering `admin` — read by the action through
 * `requestContext()`, set by the same folder's middleware.
 */
import assert from "node:assert/strict";
import { projectApp, serveApp } from "../helpers/app.ts";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";

Deno.test("/admin: basic auth for the page and for its island's server action", async (t) => {
  await using server = serveApp(projectApp());
  await using browser = await launchBrowser();

  await t.step("without credentials: 401", async () => {
    const res = await server.fetch("/admin");
    await res.body?.cancel();
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /^Basic realm="admin"/);
    const wrong = await server.fetch("/admin", {
      headers: { Authorization: `Basic ${btoa("admin:guess")}` },
    });
    await wrong.body?.cancel();
    assert.equal(wrong.status, 401);
  });

  await t.step("with admin:admin: the page, and whoAmI says admin", async () => {
    const context = await browser.newContext({
      httpCredentials: { username: "admin", password: "admin" },
    });
    const page = await context.newPage();
    const errors = pageErrors(page);
    const res = await page.goto(server.origin + "/admin");
    assert.equal(res?.status(), 200);
    assert.equal(await page.locator("strong").textContent(), "admin");
    await hydrated(page);
    await page.getByRole("button", { name: "Who am I?" }).click();
    await page.locator("output").waitFor();
    assert.equal(await page.locator("output").textContent(), "The action says: admin");
    assert.deepEqual(errors, []);
    await context.close();
  });
});
