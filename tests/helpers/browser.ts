/**
 * @module
 * Headless Chromium (Debian's) driven by playwright-core, with the flags this sandbox needs.
 */
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launchBrowser(): Promise<Browser & AsyncDisposable> {
  const browser = await chromium.launch({
    executablePath: Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium",
    args: CHROMIUM_ARGS,
  });
  return Object.assign(browser, { [Symbol.asyncDispose]: () => browser.close() });
}

/** Resolves once every island on the page is hydrated (React has claimed its first element). */
export async function hydrated(page: Page): Promise<void> {
  await page.waitForFunction(() =>
    [...document.querySelectorAll("app-island")].every((el) =>
      el.firstElementChild &&
      Object.keys(el.firstElementChild).some((key) => key.startsWith("__reactFiber"))
    )
  );
}

/** Collects the page's console errors and uncaught exceptions, as text, as they happen. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));
  page.on("pageerror", (error) => errors.push(String(error)));
  return errors;
}
