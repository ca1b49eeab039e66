/**
 * @module
 * Server actions in Chromium, on the framework's test app: the wall's form with JavaScript on (no
 * reload) and off (posts, lands back with its errors), a page rendered after a post hydrating with
 * its form state, and
 * the probe island calling actions directly, catching a failure's digest, and failing uncaught,
 * and a call from the browser continuing the page's trace.
 */
import assert from "node:assert/strict";
import type { BrowserContext, Page } from "playwright-core";
import { ACTION_SECRET as SECRET, fixtureProject } from "../helpers/fixtures.ts";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";
import { type ReceivedItem, startSentryReceiver } from "shell/testing";
import { startServer } from "../helpers/server.ts";

/** True while the document is the one `mark` was called in: no reload happened since. */
async function mark(page: Page): Promise<() => Promise<boolean>> {
  await page.evaluate(() => Object.assign(globalThis, { stillHere: true }));
  return () => page.evaluate(() => "stillHere" in globalThis);
}

async function post(page: Page, name: string, message: string): Promise<void> {
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Message").fill(message);
  await page.getByRole("button", { name: "Post" }).click();
}

Deno.test("server actions in the browser", async (t) => {
  const root = await fixtureProject();
  // Posting is limited to 5 a minute per client: a step that posts past it comes as another
  // client, through a trusted proxy's X-Forwarded-For.
  await using server = await startServer({ TRUST_PROXY: "1" }, { root });
  await using browser = await launchBrowser();
  // Pages with JavaScript share a context (a context costs Chromium more than a page does); those
  // without, or with headers or a cookie of their own, make theirs.
  const tabs = await browser.newContext();
  const url = (path: string) => server.origin + path;

  await t.step("a form posts in place with JavaScript on", async () => {
    const page = await tabs.newPage();
    const errors = pageErrors(page);
    await page.goto(url("/wall"));
    await hydrated(page);
    const noReload = await mark(page);

    await post(page, "", "hi");
    await page.locator("#name-error", { hasText: "A name, please." }).waitFor();
    assert.equal(await page.locator("#message-error").textContent(), "3 characters at least.");
    assert.equal(await page.getByLabel("Message").inputValue(), "hi");

    await post(page, "Linus", "Posted with JavaScript on.");
    await page.getByRole("status").filter({ hasText: "Posted as Linus." }).waitFor();
    await page.locator("q", { hasText: "Posted with JavaScript on." }).waitFor();
    assert.equal(await page.locator("#name-error").count(), 0);
    assert.ok(await noReload(), "the page was reloaded");
    assert.equal(page.url(), url("/wall"));
    assert.deepEqual(errors, []);
    await page.close();
  });

  await t.step("the form works with JavaScript off", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(url("/wall"));

    await post(page, "", "hi");
    await page.waitForURL(url("/wall"));
    await page.locator("#name-error", { hasText: "A name, please." }).waitFor();
    assert.equal(await page.getByLabel("Message").inputValue(), "hi");

    await post(page, "Ada", "Posted with JavaScript off.");
    await page.getByRole("status").filter({ hasText: "Posted as Ada." }).waitFor();
    assert.equal(await page.locator("q", { hasText: "Posted with JavaScript off." }).count(), 1);
    assert.equal(page.url(), url("/wall"));
    await context.close();
  });

  await t.step("a page rendered after a post hydrates with the form's state", async () => {
    const context = await browser.newContext({
      extraHTTPHeaders: { "X-Forwarded-For": "198.51.100.3" },
    });
    const page = await context.newPage();
    const errors = pageErrors(page);
    await postWithoutScript(context, url("/wall"), { name: "", message: "hi" });
    await page.goto(url("/wall"));
    await hydrated(page);
    assert.equal(await page.locator("#name-error").textContent(), "A name, please.");
    const noReload = await mark(page);
    await post(page, "Barbara", "Hydrated with the posted state.");
    await page.getByRole("status").filter({ hasText: "Posted as Barbara." }).waitFor();
    assert.ok(await noReload());
    assert.deepEqual(errors, []);
    await context.close();
  });

  await t.step("an island's call resolves with the action's value", async () => {
    const page = await tabs.newPage();
    const errors = pageErrors(page);
    await page.goto(url("/probe"));
    await hydrated(page);
    await page.getByRole("button", { name: "Echo" }).click();
    await page.waitForFunction(() => document.querySelector("#echoed")?.textContent !== "");
    assert.equal(
      await page.locator("#echoed").textContent(),
      `1970-01-01T00:00:00.000Z 1 ${2n ** 70n} hello.txt hello`,
    );

    await page.locator(`input[name="said"]`).fill("kept");
    await page.getByRole("button", { name: "Remember" }).click();
    await page.locator("#said", { hasText: "kept" }).waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  });

  await t.step("a failed call rejects with the digest, and nothing else", async () => {
    const page = await tabs.newPage();
    await page.goto(url("/probe"));
    await hydrated(page);
    await page.getByRole("button", { name: "Fail caught" }).click();
    await page.waitForFunction(() => document.querySelector("#caught")?.textContent !== "");
    const digest = (await page.locator("#caught").textContent())!;
    const line = await server.waitForLog((l) => l.digest === digest);
    assert.equal((line.error as { message: string }).message, SECRET);
    assert.ok(!(await page.content()).includes(SECRET));
    await page.close();
  });

  await t.step("an uncaught action failure ends on the server-side failure screen", async () => {
    const page = await tabs.newPage();
    await page.goto(url("/probe"));
    await hydrated(page);
    await page.getByRole("button", { name: "Fail uncaught" }).click();
    const screen = page.getByRole("alert");
    await screen.waitFor();
    assert.match(
      (await screen.textContent())!,
      /a server-side exception has occurred while loading 127\.0\.0\.1/,
    );
    const digest = (await screen.locator("code").textContent())!;
    await server.waitForLog((l) => l.digest === digest);
    assert.equal(await page.locator("html").getAttribute("data-failure"), "server");
    assert.ok(!(await page.content()).includes(SECRET));
    await page.close();
  });

  await t.step(
    "recover(): a refusal (429) becomes the form's state; without JavaScript the form still posts",
    async () => {
      const page = await tabs.newPage();
      const errors = pageErrors(page);
      await page.goto(url("/limited"));
      await hydrated(page);
      await page.locator(`input[name="said"]`).fill("first");
      await page.getByRole("button", { name: "Note" }).click();
      await page.locator("#noted", { hasText: "first" }).waitFor();
      // One call a minute: the second is refused, and the island says so, its text kept.
      await page.locator(`input[name="said"]`).fill("second");
      await page.getByRole("button", { name: "Note" }).click();
      await page.locator("#noted", { hasText: "Wait, please." }).waitFor();
      assert.equal(await page.locator(`input[name="said"]`).inputValue(), "second");
      assert.equal(await page.locator("html[data-failure]").count(), 0, "no failure screen");
      // Chromium logs every refused fetch; nothing else went wrong.
      const refused = /the server responded with a status of 429/;
      assert.deepEqual(errors.filter((error) => !refused.test(error)), []);
      await page.close();

      const context = await browser.newContext({ javaScriptEnabled: false });
      const plain = await context.newPage();
      await plain.goto(url("/limited"));
      await plain.getByRole("button", { name: "Note" }).click();
      await plain.getByRole("heading", { name: "That was a lot in a short time" }).waitFor();
      await context.close();
    },
  );

  await t.step("an island's call continues the page's trace", async () => {
    await using receiver = startSentryReceiver();
    await using traced = await startServer(
      { SENTRY_DSN: receiver.dsn, SENTRY_TRACES_SAMPLE_RATE: "1" },
      { root },
    );
    const page = await tabs.newPage();
    await page.goto(traced.origin + "/probe");
    await hydrated(page);
    await page.getByRole("button", { name: "Echo" }).click();
    await page.waitForFunction(() => document.querySelector("#echoed")?.textContent !== "");
    const named = (name: string) => (item: ReceivedItem) =>
      item.type === "transaction" && item.payload.transaction === name;
    const pageLoad = await receiver.waitFor(named("GET /probe"));
    const action = await receiver.waitFor(named("action echo"));
    assert.equal(action.payload.contexts.trace.trace_id, pageLoad.payload.contexts.trace.trace_id);
    await page.close();
  });
});

/**
 * Posts the page's action form as a browser with JavaScript off would, without following the
 * redirect: the context keeps the form-state cookie for the next visit.
 */
async function postWithoutScript(
  context: BrowserContext,
  pageUrl: string,
  values: Record<string, string>,
): Promise<void> {
  const page = await context.newPage();
  await page.goto(pageUrl);
  const { action, fields } = await page.locator("form").evaluate((form: HTMLFormElement) => ({
    action: form.action,
    fields: [...new FormData(form)].map(([k, v]) => [k, String(v)]),
  }));
  await page.close();
  const origin = new URL(pageUrl).origin;
  const res = await context.request.post(action, {
    multipart: { ...Object.fromEntries(fields), ...values },
    headers: { Origin: origin, Referer: pageUrl },
    maxRedirects: 0,
  });
  assert.equal(res.status(), 303);
}
