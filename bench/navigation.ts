/**
 * @module
 * Click to first paint in Chromium, a prefetched page against a cold one, side by side: on one
 * `deno task start` server, from the home page to `/list`, trial after trial in turn. Prefetched:
 * the pointer rests on the link until the speculation rules' prefetch is done, then clicks.
 * Cold: the page's rules are removed first (so even the press does not prefetch), then the same
 * click. The figure is the destination's `first-contentful-paint`, which counts from the click's
 * navigation start. Both arms have the page's stylesheet in the HTTP cache: only the document
 * differs.
 */
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS } from "../tests/helpers/browser.ts";
import { chromiumPath } from "../tests/setup.ts";
import { start } from "./process.ts";
import { fmt, median, type Row } from "./report.ts";

export interface NavigationOptions {
  root: string;
  /** Trials of each arm. */
  trials: number;
  progress(message: string): void;
}

const FROM = "/";
const TO = "/list";
/** Prefetched: at most this share of the cold click's time to first paint. */
export const PREFETCHED_SHARE = 0.75;

export async function measureNavigation(options: NavigationOptions) {
  const { root, trials, progress } = options;
  await using server = await start(root, ["task", "start"], {}, TO);
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  const paints: Record<"prefetched" | "cold", number[]> = { prefetched: [], cold: [] };
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(server.origin + TO); // the stylesheet into the cache
    const link = `main a[href="${TO}"]`;
    for (let trial = 0; trial < 2 * trials; trial++) {
      progress(`navigation: click to first paint, trial ${trial + 1}/${2 * trials}`);
      const arms = trial % 2 === 0
        ? ["prefetched", "cold"] as const
        : ["cold", "prefetched"] as const;
      for (const arm of arms) {
        await page.goto(server.origin + FROM);
        await page.mouse.move(0, 0);
        if (arm === "cold") {
          await page.evaluate(() =>
            document.querySelectorAll('script[type="speculationrules"]').forEach((s) => s.remove())
          );
        } else {
          const prefetched = page.context().waitForEvent("requestfinished", {
            predicate: (req) => req.url().endsWith(TO),
            timeout: 5_000,
          }).catch(() => undefined);
          await page.hover(link);
          // Chromium's prefetches are not always the page's events: then, time for one.
          if (!(await prefetched)) await page.waitForTimeout(500);
        }
        await page.click(link);
        await page.waitForURL(server.origin + TO);
        const fcp = await page.evaluate(() =>
          new Promise<number>((resolve) => {
            new PerformanceObserver((list) => {
              const entry = list.getEntriesByName("first-contentful-paint")[0];
              if (entry) resolve(entry.startTime);
            }).observe({ type: "paint", buffered: true });
          })
        );
        paints[arm].push(fcp);
      }
    }
  } finally {
    await browser.close();
    await server.stop();
  }
  const prefetched = median(paints.prefetched);
  const cold = median(paints.cold);
  const rows: Row[] = [{
    measure: `Navigation: click to first paint, ${FROM} → ${TO}, prefetched vs cold (Chromium)`,
    value: `${fmt.ms(prefetched)} vs ${fmt.ms(cold)} (${
      fmt.ratio(prefetched / cold)
    }, median of ${paints.cold.length})`,
    target: `≤ ${fmt.ratio(PREFETCHED_SHARE)}`,
    pass: prefetched / cold <= PREFETCHED_SHARE,
  }];
  return { rows, results: { paints, prefetched, cold } };
}
