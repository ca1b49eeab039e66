/**
 * @module
 * The example's task board (`/board`, DESIGN.md "Entities and live data") in Chromium: two
 * browser contexts on one board, each change made in one (add, move, delete after confirming)
 * shown in the other without a reload; the add form's field errors; and the same board with
 * JavaScript off — add (errors too), move, and delete through its confirmation page. Goes with the
 * example.
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import manifest from "@/_build/manifest.gen.ts";
import { createApp } from "shell/server";
import { serveApp } from "../../helpers/app.ts";
import { hydrated, launchBrowser, pageErrors } from "../../helpers/browser.ts";
import { PROJECT_ROOT } from "../../helpers/project_copy.ts";

/** The task card (list item) titled `title`. */
const card = (page: Page, title: string) =>
  page.locator("li.task").filter({ has: page.getByText(title, { exact: true }) });

/** The column (`Todo`, `Doing`, `Done`) the task titled `title` is in, as the page shows it. */
async function columnOf(page: Page, title: string): Promise<string> {
  return await card(page, title).evaluate((li) =>
    li.closest("section")!.querySelector("h2")!.textContent!
  );
}

async function openBoard(browser: Browser, origin: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = pageErrors(page);
  const streaming = page.waitForResponse((res) => res.url().includes("/board/events"));
  await page.goto(origin + "/board");
  await hydrated(page);
  await streaming;
  await page.getByText("Live", { exact: true }).waitFor();
  await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));
  return {
    page,
    errors,
    stillHere: () => page.evaluate(() => "notReloaded" in globalThis),
  };
}

Deno.test("the task board in Chromium", async (t) => {
  // The example app itself, from its build, in this process.
  const app = createApp(manifest, { root: PROJECT_ROOT, kv: await Deno.openKv(":memory:") });
  await using server = serveApp(app);
  await using browser = await launchBrowser();

  await t.step("two contexts: what one adds, moves and deletes, the other shows live", async () => {
    const a = await openBoard(browser, server.origin);
    const b = await openBoard(browser, server.origin);

    await a.page.getByLabel("Title").fill("Write the release notes");
    await a.page.getByRole("button", { name: "Add" }).click();
    await card(b.page, "Write the release notes").waitFor({ timeout: 5000 });
    assert.equal(await columnOf(b.page, "Write the release notes"), "Todo");
    assert.equal(await a.page.getByLabel("Title").inputValue(), "", "the form is cleared");

    await card(a.page, "Write the release notes").getByRole("button", { name: "Doing" }).click();
    await b.page.locator("section", { hasText: "Doing" }).getByText("Write the release notes")
      .waitFor({ timeout: 5000 });
    assert.equal(await columnOf(b.page, "Write the release notes"), "Doing");
    assert.equal(
      await card(b.page, "Write the release notes").locator(".task-state").textContent(),
      "Doing",
    );

    // And back the other way: B moves it, A sees it.
    await card(b.page, "Write the release notes").getByRole("button", { name: "Done" }).click();
    await a.page.locator("section", { hasText: "Done" }).getByText("Write the release notes")
      .waitFor({ timeout: 5000 });

    // Delete asks first: cancelling keeps the task.
    await card(a.page, "Write the release notes").getByRole("button", { name: "Delete" }).click();
    const dialog = a.page.getByRole("dialog", { name: "Delete “Write the release notes”?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    assert.equal(await card(a.page, "Write the release notes").count(), 1);

    await card(a.page, "Write the release notes").getByRole("button", { name: "Delete" }).click();
    await dialog.getByRole("button", { name: "Yes, delete" }).click();
    await card(b.page, "Write the release notes").waitFor({ state: "detached", timeout: 5000 });
    await card(a.page, "Write the release notes").waitFor({ state: "detached", timeout: 5000 });

    for (const side of [a, b]) {
      assert.ok(await side.stillHere(), "a page was reloaded");
      assert.deepEqual(side.errors, []);
      await side.page.context().close();
    }
  });

  await t.step("the add form's field errors, with JavaScript", async () => {
    const { page, errors } = await openBoard(browser, server.origin);
    await page.getByRole("button", { name: "Add" }).click();
    await page.getByText("Give the task a title.").waitFor();
    assert.equal(await page.getByLabel("Title").getAttribute("aria-invalid"), "true");
    await page.getByLabel("Title").fill("x".repeat(121));
    await page.getByRole("button", { name: "Add" }).click();
    await page.getByText("120 characters at most.").waitFor();
    assert.equal(
      await page.getByLabel("Title").inputValue(),
      "x".repeat(121),
      "what was typed stays",
    );
    assert.equal(await page.locator("li.task").count(), 0);
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  await t.step(
    "JavaScript off: add (with its errors), move, and delete after a confirmation page",
    async () => {
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(server.origin + "/board");

      await page.getByRole("button", { name: "Add" }).click();
      await page.waitForURL(server.origin + "/board");
      await page.getByText("Give the task a title.").waitFor();

      await page.getByLabel("Title").fill("Plan the offsite");
      await page.getByRole("button", { name: "Add" }).click();
      await page.waitForURL(server.origin + "/board");
      assert.equal(await columnOf(page, "Plan the offsite"), "Todo");

      await card(page, "Plan the offsite").getByRole("button", { name: "Doing" }).click();
      await page.waitForURL(server.origin + "/board");
      assert.equal(await columnOf(page, "Plan the offsite"), "Doing");

      await card(page, "Plan the offsite").getByRole("button", { name: "Delete" }).click();
      await page.waitForURL(/\/board\/delete\?task=/);
      await page.getByRole("heading", { name: "Delete “Plan the offsite”?" }).waitFor();
      await page.getByRole("link", { name: "Cancel" }).click();
      await page.waitForURL(server.origin + "/board");
      assert.equal(await card(page, "Plan the offsite").count(), 1, "cancelling keeps it");

      await card(page, "Plan the offsite").getByRole("button", { name: "Delete" }).click();
      await page.getByRole("button", { name: "Yes, delete" }).click();
      await page.waitForURL(server.origin + "/board");
      assert.equal(await card(page, "Plan the offsite").count(), 0);
      await context.close();
    },
  );
});
