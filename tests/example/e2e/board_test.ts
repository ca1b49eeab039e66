/**
 * @module
 * The example's task board (`/board`, DESIGN.md "Entities and live data") in Chromium, for
 * signed-in users: a signed-out visitor is sent to log in and lands back on the board, and the
 * board's event stream and actions refuse anyone signed out (401, over real HTTP); two browser
 * contexts of two users on one board, each change made in one (add, move, delete after confirming)
 * shown in the other without a reload; the add form's field errors; an open board whose user
 * signed out in another tab, whose add and move say to sign in; the same board with
 * JavaScript off — add (errors too), move, and delete through its confirmation page; and an open
 * board whose user logged out everywhere from another device, whose stream ends (its lifetime) and
 * is refused, so that it stops getting changes. Goes with the example.
 */
import assert from "node:assert/strict";
import type { Browser, Locator, Page } from "playwright-core";
import manifest from "@/_build/manifest.gen.ts";
import { addTask, moveTask, removeTask } from "@/routes/board/_tasks/actions.ts";
import { tasks } from "@/routes/board/_tasks/tasks.ts";
import { createUser } from "shell/auth";
import { type App, createApp } from "shell/server";
import { TestClient } from "shell/testing";
import { serveApp } from "../../helpers/app.ts";
import { hydrated, launchBrowser, pageErrors } from "../../helpers/browser.ts";
import { PROJECT_ROOT } from "../../helpers/project_copy.ts";
import { signInBrowser } from "./log_in.ts";

type Person = { email: string; password: string };
const ADA: Person = { email: "ada@example.com", password: "correct horse battery" };
const GRACE: Person = { email: "grace@example.com", password: "a long enough passphrase" };

/** The task card (list item) titled `title`, on the page or only in one column of it. */
const card = (page: Page, title: string, within: Page | Locator = page) =>
  within.locator("li.task").filter({ has: page.getByText(title, { exact: true }) });

/**
 * The column (`Todo`, `Doing`, `Done`): its section, named by its heading. (Not "the section with
 * the text Doing": every card has a button "Doing", so that matches every column, and a wait on it
 * ended before the card had moved.)
 */
const column = (page: Page, name: string) => page.getByRole("region", { name, exact: true });

/** The column (`Todo`, `Doing`, `Done`) the task titled `title` is in, as the page shows it. */
async function columnOf(page: Page, title: string): Promise<string> {
  return await card(page, title).evaluate((li) =>
    li.closest("section")!.querySelector("h2")!.textContent!
  );
}

/**
 * Waits until the add form is empty again: React resets it only when the page's own action answer
 * arrives, which can come after the page's stream (or another page's) showed the new task.
 */
async function addFormCleared(page: Page): Promise<void> {
  await page.waitForFunction(
    () => (document.getElementById("task-title") as HTMLInputElement).value === "",
    undefined,
    { timeout: 5000 },
  );
}

/** A new browser context of `person`'s, signed in to `app` (at `origin`) and on the board, its stream live. */
async function openBoard(browser: Browser, app: App, origin: string, person: Person) {
  const context = await browser.newContext();
  await signInBrowser(context, app, origin, person.email);
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
  // The example app itself, from its build, in this process, with two of the team.
  using kv = await Deno.openKv(":memory:");
  for (const person of [ADA, GRACE]) await createUser(kv, person);
  const app = createApp(manifest, { root: PROJECT_ROOT, kv });
  await using server = serveApp(app);
  await using browser = await launchBrowser();

  await t.step("signed out: to /login and back to the board", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = pageErrors(page);
    await page.goto(server.origin + "/board");
    assert.equal(new URL(page.url()).pathname + new URL(page.url()).search, "/login?next=%2Fboard");
    await hydrated(page);
    await page.getByLabel("Email").fill(ADA.email);
    await page.getByLabel("Password").fill(ADA.password);
    await Promise.all([
      page.waitForURL(server.origin + "/board"),
      page.getByRole("button", { name: "Log in" }).click(),
    ]);
    await page.getByRole("heading", { name: "Task board" }).waitFor();
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.step("signed out, over HTTP: the stream and every action refuse (401)", async () => {
    const stream = await fetch(server.origin + "/board/events", {
      headers: { Accept: "text/event-stream" },
    });
    assert.equal(stream.status, 401);
    assert.deepEqual(await stream.json(), {
      error: { status: 401, message: "Sign in to continue." },
    });
    // As an island on a page left open after signing out calls them.
    const anonymous = new TestClient(server.origin);
    const form = new FormData();
    form.set("title", "Sneaked in");
    form.set("id", "01JAAAAAAAAAAAAAAAAAAAAAAA");
    form.set("state", "done");
    for (
      const call of [
        () => anonymous.call(addTask, {}, form),
        () => anonymous.call(moveTask, {}, form),
        () => anonymous.call(removeTask, {}, form),
      ]
    ) {
      const refused = await call().catch((error) => error);
      assert.equal(refused.name, "ActionError");
      assert.equal(refused.status, 401);
      assert.equal(refused.message, "Sign in to continue.");
    }
    assert.deepEqual((await tasks.snapshot(kv)).items, [], "no action ran");
  });

  await t.step(
    "two users' contexts: what one adds, moves and deletes, the other shows live",
    async () => {
      const a = await openBoard(browser, app, server.origin, ADA);
      const b = await openBoard(browser, app, server.origin, GRACE);

      await a.page.getByLabel("Title").fill("Write the release notes");
      await a.page.getByRole("button", { name: "Add" }).click();
      await card(b.page, "Write the release notes").waitFor({ timeout: 5000 });
      assert.equal(await columnOf(b.page, "Write the release notes"), "Todo");
      // The stream can show it to B before A's own answer clears A's form: wait for that too.
      await addFormCleared(a.page);

      await card(a.page, "Write the release notes").getByRole("button", { name: "Doing" }).click();
      await card(b.page, "Write the release notes", column(b.page, "Doing")).waitFor({
        timeout: 5000,
      });
      assert.equal(await columnOf(b.page, "Write the release notes"), "Doing");
      assert.equal(
        await card(b.page, "Write the release notes").locator(".task-state").textContent(),
        "Doing",
      );

      // And back the other way: B moves it, A sees it.
      await card(b.page, "Write the release notes").getByRole("button", { name: "Done" }).click();
      await card(a.page, "Write the release notes", column(a.page, "Done")).waitFor({
        timeout: 5000,
      });

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
    },
  );

  await t.step("the add form's field errors, with JavaScript", async () => {
    const { page, errors } = await openBoard(browser, app, server.origin, ADA);
    const before = (await tasks.snapshot(kv)).items;
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
    // Nothing was added (counted against the board as it was: a step before that failed may
    // have left tasks of its own).
    assert.deepEqual((await tasks.snapshot(kv)).items, before);
    assert.equal(await card(page, "x".repeat(121)).count(), 0);
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  await t.step("signed out in another tab: the open board's actions say so", async () => {
    const { page, errors } = await openBoard(browser, app, server.origin, ADA);
    await page.getByLabel("Title").fill("Before signing out");
    await page.getByRole("button", { name: "Add" }).click();
    await card(page, "Before signing out").waitFor();
    // The card can come over the stream before the answer that clears the form: typing before
    // that, the reset would wipe the next title and "Add" would post an empty one.
    await addFormCleared(page);

    const other = await page.context().newPage();
    await other.goto(server.origin + "/account");
    await Promise.all([
      other.waitForURL(server.origin + "/"),
      other.getByRole("button", { name: "Log out", exact: true }).click(),
    ]);
    await other.close();

    await page.getByLabel("Title").fill("After signing out");
    await page.getByRole("button", { name: "Add" }).click();
    await page.locator("form.add-task").getByRole("alert").filter({
      hasText: "Sign in to continue.",
    }).waitFor();
    await card(page, "Before signing out").getByRole("button", { name: "Done" }).click();
    await card(page, "Before signing out").getByRole("alert").filter({
      hasText: "Sign in to continue.",
    }).waitFor();
    // This step's own tasks only: a step before that failed may have left some of its own.
    const stored = (await tasks.snapshot(kv)).items.map(({ value }) => value).filter(({ title }) =>
      title.endsWith(" signing out")
    );
    assert.deepEqual(stored, [{ title: "Before signing out", state: "todo" }]);
    // Said on the page, not a failure: only the browser's own note of the refused request.
    assert.deepEqual(errors.filter((error) => !/status of 401/.test(error)), []);
    await page.context().close();
  });

  await t.step(
    "JavaScript off: add (with its errors), move, and delete after a confirmation page",
    async () => {
      const context = await browser.newContext({ javaScriptEnabled: false });
      await signInBrowser(context, app, server.origin, GRACE.email);
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

  await t.step(
    "'Log out everywhere' on another device: the open board's stream ends, its changes stop",
    async () => {
      // Streams of a second each, so that the step sees one end (5 minutes by default).
      const shortLived = createApp(manifest, {
        root: PROJECT_ROOT,
        kv,
        eventStreamLifetimeMs: 1000,
      });
      await using short = serveApp(shortLived);
      const ada = await openBoard(browser, shortLived, short.origin, ADA);
      const grace = await openBoard(browser, shortLived, short.origin, GRACE);
      await tasks.create(kv, { title: "Seen while signed in", state: "todo" });
      await card(ada.page, "Seen while signed in").waitFor();

      const phone = await browser.newContext();
      await signInBrowser(phone, shortLived, short.origin, ADA.email);
      const other = await phone.newPage();
      await other.goto(short.origin + "/account");
      await Promise.all([
        other.waitForURL((url) => url.pathname === "/login"),
        other.getByRole("button", { name: "Log out everywhere" }).click(),
      ]);
      await phone.close();

      // The stream the board opened while signed in ends; the next is refused.
      await ada.page.getByText("Connecting…", { exact: true }).waitFor({ timeout: 15_000 });
      await tasks.create(kv, { title: "Added after signing out", state: "todo" });
      // A board still signed in shows it: by then a stream Ada's board still held would too.
      await card(grace.page, "Added after signing out").waitFor();
      assert.equal(await card(ada.page, "Added after signing out").count(), 0);
      assert.ok(await ada.stillHere(), "not by a reload");
      assert.deepEqual(ada.errors.filter((error) => !/status of 401/.test(error)), []);
      await Promise.all([ada, grace].map(({ page }) => page.context().close()));
    },
  );
});
