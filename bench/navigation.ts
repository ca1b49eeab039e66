/**
 * @module
 * Click to first paint in Chromium, a prefetched page against a cold one: on one `deno task start`
 * server of the example app, from its home page to `/list`, every kind of click in turn, trial
 * after trial (the order reversed every other trial, so a drift in the machine's load hits every
 * kind alike). The example, not the test app: its stylesheet is imported the way the docs say
 * (`import "./app.css"`), so the build serves it hashed and immutable, and it opts in to
 * cross-document view transitions; the test app links a `static/` stylesheet, which the browser
 * revalidates on every page (a render-blocking round trip for both kinds).
 *
 * - **Prefetched**: the pointer rests on the link until Chromium reports the speculation rules'
 *   prefetch ready (DevTools' `Preload` domain), then clicks; the new document must say it came
 *   from that prefetch (`deliveryType` `navigational-prefetch`) and the prefetch must say it was
 *   used, or the bench stops: it would be measuring something else.
 * - **Cold**: the page's rules are removed first (so not even the press prefetches), then the same
 *   click; the document must come from the server (`deliveryType` empty: the page is
 *   `Cache-Control: private, no-cache` with no validator, so not from the HTTP cache either; the
 *   back/forward cache plays no part in a click forward, and Playwright turns it off anyway).
 *
 * The figure is from the click event's timestamp (in the old document's clock) to the new
 * document's `first-contentful-paint` (in its own): both as times since the epoch, the one clock
 * documents of a tab share. Both kinds have the page's stylesheet in the HTTP cache (hashed,
 * immutable), as a visitor coming from another page of the app has: only the document differs.
 *
 * Each kind is measured under four conditions:
 * - **on loopback**, and **over a round trip** of {@link ROUND_TRIP_MS} ms (Chromium's network
 *   emulation: the headers of every request that goes to the network arrive that much later;
 *   the HTTP cache's answers do not wait), since what a prefetch saves is the document's request —
 *   on loopback only the server's render time and next to nothing else. The target is for the
 *   round trip; the loopback rows are information;
 * - **with the example's cross-document view transition** (its stylesheet opts in), and
 *   **without** (`prefers-reduced-motion: reduce`, which the same stylesheet turns it off for):
 *   a view transition holds the new page's first paint until the old page is captured and the new
 *   one is ready to animate, the same delay for both kinds.
 *
 * Prerendering (`data-prerender`, a route's `prerender`) is not measured: under Playwright,
 * Chromium refuses it (`PrerenderingDisabledByDevTools` in the `Preload` domain's report).
 */
import { type CDPSession, chromium, type Page } from "playwright-core";
import { CHROMIUM_ARGS } from "../tests/helpers/browser.ts";
import { chromiumPath } from "../tests/setup.ts";
import { start } from "./process.ts";
import { fmt, median, type Row } from "./report.ts";

export interface NavigationOptions {
  root: string;
  /** Clicks of each kind under each condition. */
  trials: number;
  progress(message: string): void;
}

const FROM = "/";
const TO = "/list";
/** Prefetched: at most this share of the cold click's time to first paint. */
export const PREFETCHED_SHARE = 0.75;
/** The emulated network's round trip: a visitor near the region serving them. */
export const ROUND_TRIP_MS = 50;
/** How long a prefetch may take to be ready once the pointer rests on the link. */
const PREFETCH_READY_MS = 10_000;

const KINDS = ["prefetched", "cold"] as const;
type Kind = typeof KINDS[number];

interface Condition {
  name: string;
  /** Round trip added to every request, ms (0: loopback as it is). */
  roundTripMs: number;
  viewTransition: boolean;
  /** Whether the target applies to this condition's ratio (else the row is information). */
  target: boolean;
}

const CONDITIONS: Condition[] = [
  {
    name: `${ROUND_TRIP_MS} ms round trip`,
    roundTripMs: ROUND_TRIP_MS,
    viewTransition: false,
    target: true,
  },
  {
    name: `${ROUND_TRIP_MS} ms round trip, view transition`,
    roundTripMs: ROUND_TRIP_MS,
    viewTransition: true,
    target: true,
  },
  // Information: on loopback the document's request costs next to nothing, so a prefetch has
  // next to nothing to take off the click (docs/performance.md says where the time goes).
  { name: "loopback", roundTripMs: 0, viewTransition: false, target: false },
  { name: "loopback, view transition", roundTripMs: 0, viewTransition: true, target: false },
];

/** One click: milliseconds from the click to the new page's first contentful paint. */
export interface Click {
  condition: string;
  kind: Kind;
  clickToPaintMs: number;
  /** From the new document's navigation start, as `first-contentful-paint` reports it. */
  paintMs: number;
  /** When the document's response began, from navigation start (0 for a prefetch). */
  responseStartMs: number;
}

interface Spread {
  median: number;
  p25: number;
  p75: number;
  min: number;
  max: number;
}

function spread(values: number[]): Spread {
  const sorted = values.toSorted((a, b) => a - b);
  const at = (share: number) => sorted[Math.round(share * (sorted.length - 1))];
  return { median: median(values), p25: at(0.25), p75: at(0.75), min: sorted[0], max: at(1) };
}

/** The prefetch statuses Chromium reports for `url` on this page (DevTools' `Preload` domain). */
function prefetchStatuses(cdp: CDPSession) {
  const seen: { url: string; status: string; prefetchStatus?: string }[] = [];
  const waiters = new Set<() => void>();
  cdp.on("Preload.prefetchStatusUpdated", (event) => {
    seen.push({
      url: event.prefetchUrl,
      status: event.status,
      prefetchStatus: event.prefetchStatus,
    });
    for (const wake of waiters) wake();
  });
  return {
    clear: () => seen.length = 0,
    has: (url: string, status: string) => seen.some((s) => s.url === url && s.status === status),
    of: (url: string) => seen.filter((s) => s.url === url),
    /** Resolves once `url`'s prefetch reached `status`; rejects after `ms`. */
    until(url: string, status: string, ms: number): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no prefetch of ${url} reached ${status} within ${ms} ms`));
        }, ms);
        const check = () => {
          if (!seen.some((s) => s.url === url && s.status === status)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** Clicks `link` on a page that recorded the click's time, and reads the new page's paint. */
async function clickAndPaint(page: Page, link: string, url: string) {
  await page.evaluate(() =>
    addEventListener(
      "click",
      (event) =>
        sessionStorage.setItem("bench:click", String(performance.timeOrigin + event.timeStamp)),
      { capture: true, once: true },
    )
  );
  await page.click(link);
  await page.waitForURL(url);
  return await page.evaluate(() =>
    new Promise<
      { clicked: number; origin: number; paint: number; delivery: string; responseStart: number }
    >(
      (resolve) => {
        new PerformanceObserver((list) => {
          const paint = list.getEntriesByName("first-contentful-paint")[0];
          if (!paint) return;
          const navigation = performance.getEntriesByType("navigation")[0] as
            & PerformanceNavigationTiming
            & {
              deliveryType: string;
            };
          resolve({
            clicked: Number(sessionStorage.getItem("bench:click")),
            origin: performance.timeOrigin,
            paint: paint.startTime,
            delivery: navigation.deliveryType,
            responseStart: navigation.responseStart,
          });
        }).observe({ type: "paint", buffered: true });
      },
    )
  );
}

export async function measureNavigation(options: NavigationOptions) {
  const { root, trials, progress } = options;
  await using server = await start(root, ["task", "start"], {}, TO);
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  const clicks: Click[] = [];
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Preload.enable");
    const prefetches = prefetchStatuses(cdp);
    await page.goto(server.origin + TO); // the stylesheet into the HTTP cache
    const link = `main a[href="${TO}"]`;
    const target = server.origin + TO;
    const turns = CONDITIONS.flatMap((condition) => KINDS.map((kind) => ({ condition, kind })));
    for (let trial = 0; trial < trials; trial++) {
      progress(
        `navigation: click to first paint, trial ${trial + 1}/${trials} (${turns.length} clicks)`,
      );
      for (const { condition, kind } of trial % 2 === 0 ? turns : turns.toReversed()) {
        await cdp.send("Network.emulateNetworkConditions", {
          offline: false,
          latency: condition.roundTripMs,
          downloadThroughput: -1,
          uploadThroughput: -1,
        });
        await page.emulateMedia({
          reducedMotion: condition.viewTransition ? "no-preference" : "reduce",
        });
        await page.goto(server.origin + FROM);
        await page.mouse.move(0, 0);
        prefetches.clear();
        if (kind === "cold") {
          await page.evaluate(() =>
            document.querySelectorAll('script[type="speculationrules"]').forEach((s) => s.remove())
          );
        } else {
          await page.hover(link);
          await prefetches.until(target, "Ready", PREFETCH_READY_MS);
        }
        const seen = await clickAndPaint(page, link, target);
        const fromPrefetch = seen.delivery === "navigational-prefetch";
        if (kind === "prefetched" && !(fromPrefetch && prefetches.has(target, "Success"))) {
          throw new Error(
            `a prefetched click did not use its prefetch (deliveryType "${seen.delivery}", ` +
              `${JSON.stringify(prefetches.of(target))})`,
          );
        }
        if (kind === "cold" && (seen.delivery !== "" || prefetches.of(target).length > 0)) {
          throw new Error(`a cold click was not a network load (deliveryType "${seen.delivery}")`);
        }
        clicks.push({
          condition: condition.name,
          kind,
          clickToPaintMs: seen.origin + seen.paint - seen.clicked,
          paintMs: seen.paint,
          responseStartMs: seen.responseStart,
        });
      }
    }
  } finally {
    await browser.close();
    await server.stop();
  }
  const summary = CONDITIONS.map((condition) => {
    const of = (kind: Kind) =>
      clicks.filter((c) => c.condition === condition.name && c.kind === kind);
    const prefetched = spread(of("prefetched").map((c) => c.clickToPaintMs));
    const cold = spread(of("cold").map((c) => c.clickToPaintMs));
    // What a prefetch can take off on loopback: the cold document's wait for its response (as
    // Chromium times it, before DevTools' emulated latency is added).
    const coldResponseStartMs = median(of("cold").map((c) => c.responseStartMs));
    return {
      condition,
      prefetched,
      cold,
      ratio: prefetched.median / cold.median,
      coldResponseStartMs,
    };
  });
  const quartiles = (s: Spread) => `${fmt.ms(s.p25)}–${fmt.ms(s.p75)}`;
  const rows: Row[] = summary.map(({ condition, prefetched, cold, ratio }) => ({
    measure:
      `Navigation: click to first paint, ${FROM} → ${TO}, prefetched vs cold (Chromium, ${condition.name})`,
    value:
      `${fmt.ms(prefetched.median)} vs ${fmt.ms(cold.median)} (${
        fmt.ratio(ratio)
      }; medians of ${trials}, ` +
      `middle halves ${quartiles(prefetched)} and ${quartiles(cold)})`,
    target: condition.target ? `≤ ${fmt.ratio(PREFETCHED_SHARE)}` : "—",
    pass: condition.target ? ratio <= PREFETCHED_SHARE : undefined,
  }));
  return {
    rows,
    results: {
      roundTripMs: ROUND_TRIP_MS,
      summary: summary.map(({ condition, ...figures }) => ({
        condition: condition.name,
        ...figures,
      })),
      clicks,
    },
  };
}

if (import.meta.main) {
  const { copyProject, PROJECT_ROOT } = await import("../tests/helpers/project_copy.ts");
  const { table } = await import("./report.ts");
  await using project = await copyProject({ from: PROJECT_ROOT });
  const { rows, results } = await measureNavigation({
    root: project.root,
    trials: Number(Deno.env.get("BENCH_NAVIGATIONS") ?? 20),
    progress: (message) => console.error(`bench: ${message}`),
  });
  console.log(table(rows));
  console.error(JSON.stringify(results.summary));
}
