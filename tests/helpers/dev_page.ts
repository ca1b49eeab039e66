/**
 * @module
 * Watching an open page through a `deno task dev` save: whether it reloaded (a mark on its window
 * that a reload takes away) or the dev client updated its islands in place (its console says so).
 * Each wait is for the event, bounded.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";

/** Bound on a save showing in the browser: rebuild, maybe a server restart, the update. */
export const SHOWN_MS = 20_000;

/** Marks the page's window: a reload takes the mark away, an update in place does not. */
export async function mark(page: Page): Promise<void> {
  await page.evaluate(() => Object.assign(globalThis, { devTestMark: true }));
}

export async function marked(page: Page): Promise<boolean> {
  return await page.evaluate(() => "devTestMark" in globalThis);
}

/** Saves, and waits until the page has loaded again. */
export async function reloadsAfter(page: Page, save: () => Promise<void>): Promise<void> {
  await mark(page);
  const loaded = page.waitForEvent("load", { timeout: SHOWN_MS });
  await save();
  await loaded;
  assert.ok(!(await marked(page)), "the page reloaded");
}

/**
 * Saves, and waits until the dev client says it updated the page's islands in place; a reload
 * instead fails at once, with the reason the dev client gave.
 */
export async function updatedAfter(page: Page, save: () => Promise<void>): Promise<void> {
  await mark(page);
  const said = page.waitForEvent("console", {
    predicate: (message) => /^\[dev\] (updated|reloading)/.test(message.text()),
    timeout: SHOWN_MS,
  });
  await save();
  const text = (await said).text();
  assert.match(text, /^\[dev\] updated /, `updated in place, not: ${text}`);
  assert.ok(await marked(page), "the page did not reload");
}
