/**
 * @module
 * A user's double click on a form whose answer is on its way: the first post reaches the server
 * and is answered, and that answer is held (as a slow server or network holds it) until the
 * second click's post is sent. The clicks go through the mouse, as a user's do: a locator's click
 * would wait for the held navigation. Every wait is bounded: a click never sent fails, naming the
 * step, and never hangs the suite.
 */
import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import { within } from "./wait.ts";

const STEP_MS = 15_000;

/** Clicks `button` twice, the first post's answer held until the second post is sent. */
export async function doubleClickHoldingFirstAnswer(page: Page, button: Locator): Promise<void> {
  const { promise: answered, resolve: answer } = Promise.withResolvers<void>();
  const { promise: again, resolve: sentAgain } = Promise.withResolvers<void>();
  let seen = 0;
  // The handler stays: later posts go on as they are. (Unrouting waited on Chromium once, for
  // good, in a CI run: the held answer's navigation was already dropped.)
  await page.route("**/_action/**", async (route) => {
    if (seen++ > 0) {
      sentAgain();
      return await route.continue();
    }
    const response = await route.fetch({ maxRedirects: 0 });
    answer();
    await within(again, STEP_MS, "the second click's post").catch(() => {});
    // The browser dropped this navigation for the second post's.
    await within(route.fulfill({ response }), STEP_MS, "the dropped navigation's answer")
      .catch(() => {});
  });
  const box = await button.boundingBox();
  assert.ok(box, "the button is on the page");
  const click = () => page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await click();
  await within(answered, STEP_MS, "the first click's post, answered");
  await click();
}
