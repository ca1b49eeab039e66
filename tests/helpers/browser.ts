/**
 * @module
 * Headless Chromium (Debian's) driven by playwright-core, with the flags this sandbox needs.
 */
import { type Browser, chromium, type Page } from "playwright-core";
import { chromiumPath } from "../setup.ts";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Chromium, headless. `backForwardCache`: keep Chromium's back/forward cache on (playwright turns
 * it off); a back navigation restored from it fires no `load`: wait for `commit`.
 */
export async function launchBrowser(
  { backForwardCache = false }: { backForwardCache?: boolean } = {},
): Promise<Browser & AsyncDisposable> {
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: CHROMIUM_ARGS,
    ignoreDefaultArgs: backForwardCache ? ["--disable-back-forward-cache"] : [],
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

/**
 * Watches the page's requests; `quiet()` then resolves once none is in flight and what the last
 * ones set off (a chunk's code, hydration) has run a frame and a task later with still none: the
 * bounded, event-driven way to wait before asserting that something did not happen. An event
 * stream is open for as long as the page: it is not counted.
 */
export function watchRequests(page: Page): { quiet(ms?: number): Promise<void> } {
  const inFlight = new Set<unknown>();
  page.on("request", (req) => req.resourceType() !== "eventsource" && inFlight.add(req));
  page.on("requestfinished", (req) => inFlight.delete(req));
  page.on("requestfailed", (req) => inFlight.delete(req));
  const settle = () =>
    page.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done))));
  return {
    async quiet(ms = 10_000) {
      const until = performance.now() + ms;
      for (;;) {
        if (performance.now() > until) throw new Error(`requests still in flight after ${ms} ms`);
        if (inFlight.size > 0) {
          await new Promise((poll) => setTimeout(poll, 20));
          continue;
        }
        await settle();
        if (inFlight.size === 0) return;
      }
    },
  };
}

/**
 * Collects the page's console errors and uncaught exceptions, as text, as they happen. A missing
 * `/favicon.ico` is not the page's error: Chromium asks for it by itself when the document names
 * no icon (an app's own `_app.tsx` may well not).
 */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    if (new URL(msg.location().url || "about:blank").pathname === "/favicon.ico") return;
    errors.push(msg.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  return errors;
}
