/**
 * @module
 * `<Contained>` parts in Chromium, against the tests' own app (`error_fixtures.ts`) with Sentry on
 * (a receiver on 127.0.0.1 reading what the real `@sentry/react` sends): an island that breaks while
 * rendering, whose chunk is gone, or whose render throws after a click replaces only its part with
 * the fallback; a part inside an island falls back on its own; the rest of the page keeps working,
 * and every such error is logged to the console and reported to Sentry as contained. Without
 * `<Contained>` the page still gives way to the client-side screen.
 */
import assert from "node:assert/strict";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";
import { errorsProject } from "../helpers/error_fixtures.ts";
import { isErrorEvent, startSentryReceiver } from "shell/testing";
import { startServer } from "../helpers/server.ts";

const FALLBACK = "This part could not start.";

Deno.test("contained failures in the browser", async (t) => {
  await using browser = await launchBrowser();
  await using receiver = startSentryReceiver();
  const root = await errorsProject();
  await using server = await startServer({
    NODE_ENV: "production",
    SENTRY_DSN: receiver.dsn,
    SENTRY_TRACES_SAMPLE_RATE: "0",
  }, { root });
  const context = await browser.newContext();

  const cases = [
    { which: "render", kind: "render", message: "fragile island failure" },
    { which: "lost", kind: "island-load", message: "Failed to fetch dynamically imported module" },
    { which: "click", kind: "render", message: "ticker failure after a click", click: "Tick" },
  ];
  for (const { which, kind, message, click } of cases) {
    await t.step(`${which}: the part gives way to its fallback, the page stays`, async () => {
      const page = await context.newPage();
      const errors = pageErrors(page);
      await page.goto(`${server.origin}/contained/${which}`);
      if (click) {
        await hydrated(page);
        await page.getByRole("button", { name: click }).click();
      }
      await page.locator("#fallback").waitFor();
      assert.equal(await page.locator("#fallback").textContent(), FALLBACK);
      assert.equal(await page.locator("html[data-failure]").count(), 0);
      assert.equal(await page.locator("h1").textContent(), "Contained");
      // The rest of the page still works.
      await page.getByRole("button", { name: "Sturdy 0" }).click();
      await page.getByRole("button", { name: "Sturdy 1" }).waitFor();
      assert.ok(errors.some((text) => text.includes(message)), errors.join("\n"));
      const event = await receiver.waitFor((item) =>
        isErrorEvent(item) && item.payload.tags?.contained === true &&
        item.payload.request?.url?.endsWith(`/contained/${which}`)
      );
      assert.equal(event.payload.tags.kind, kind);
      assert.equal(event.payload.level, "error", "not fatal: the page stayed");
      assert.match(event.payload.exception.values[0].value, new RegExp(message));
      await page.close();
    });
  }

  await t.step("inside an island: its own part falls back, the island stays", async () => {
    const page = await context.newPage();
    const errors = pageErrors(page);
    await page.goto(`${server.origin}/contained/inside`);
    await hydrated(page);
    assert.equal(await page.getByText("Chart drawn").count(), 1);
    await page.getByRole("button", { name: "Break the chart" }).click();
    await page.getByText("The chart is unavailable.").waitFor();
    assert.equal(await page.getByText("Panel footer").count(), 1, "the island stays");
    assert.equal(await page.locator("#fallback").count(), 0, "the page's part stays");
    assert.equal(await page.locator("html[data-failure]").count(), 0);
    assert.ok(errors.some((text) => text.includes("chart failure")), errors.join("\n"));
    const event = await receiver.waitFor((item) =>
      isErrorEvent(item) && item.payload.tags?.kind === "caught" &&
      item.payload.exception?.values?.[0]?.value === "chart failure"
    );
    assert.equal(event.payload.level, "error");
    await page.close();
  });

  await t.step("without <Contained>: the client-side screen, as ever", async () => {
    const page = await context.newPage();
    await page.goto(`${server.origin}/screens/client`);
    await page.waitForSelector('html[data-failure="client"] main [role=alert]');
    await page.close();
  });
});
