/**
 * @module
 * `useFeed`'s backoff in Chromium, on a built copy with a page and streams of the test's own, with
 * short timings (`retry: { firstMs: 250, maxMs: 4000, steadyMs: 1000 }`, the server's `retry:`
 * 200 ms). The server notes when each stream opens and when its source fails. A stream whose source
 * fails as it opens, and one whose source sends one event (a hello, a snapshot) and then fails, are
 * not healthy: the page opens each again later each time (after about 0.25, 0.5, 1, 2, 4 s, not
 * every 200 ms for as long as the page is open). A stream that stayed open past `steadyMs` before
 * it failed was healthy: each drop gets the browser's quick reconnection (200 ms), however many
 * times it happens. The three pages run side by side, each over a window of its own. That a stream
 * ending by design (`renew`) is opened again at once, with no drop shown, is
 * `live_collection_test.ts`'s.
 */
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { hydrated, launchBrowser } from "../helpers/browser.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { startServer } from "../helpers/server.ts";

/** How long the `steady` source stays open before it fails: past the page's `steadyMs`. */
const HOLD_MS = 1_200;

const FILES: Record<string, string> = {
  "routes/_feed/times.ts":
    `/** When each mode's streams opened and when their sources failed, by the server's clock. */
export const times: Record<string, { opened: number[]; failed: number[] }> = {};
export const timesOf = (mode: string) => times[mode] ??= { opened: [], failed: [] };
`,
  // `fails`: the source throws at once, after the stream opened (its `retry:` preamble is sent).
  // `once`: it sends one event first, then throws. `steady`: one event, open HOLD_MS, then throws.
  "routes/feed/[mode]/events.ts": `import type { Handlers } from "shell";
import { eventStream } from "shell";
import { timesOf } from "../../_feed/times.ts";

export const handler: Handlers = {
  GET(req, ctx) {
    const mode = ctx.params.mode;
    const times = timesOf(mode);
    times.opened.push(Date.now());
    return eventStream(req, ctx, async function* (signal) {
      if (mode !== "fails") yield { id: Date.now(), event: "tick", data: "" };
      if (mode === "steady") {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ${HOLD_MS});
          signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve();
          }, { once: true });
        });
      }
      if (!signal.aborted) times.failed.push(Date.now());
      throw new Error("the feed's source failed");
    }, { retryMs: 200 });
  },
};
`,
  "routes/feed/[mode]/times.ts": `import type { Handlers } from "shell";
import { timesOf } from "../../_feed/times.ts";

export const handler: Handlers = {
  GET: (_req, ctx) => Response.json(timesOf(ctx.params.mode)),
};
`,
  "routes/feed/[mode]/index.tsx": `import Follow from "@/islands/Follow.tsx";
import type { PageProps } from "shell";

export default function Page({ params }: PageProps) {
  return <Follow events={"/feed/" + params.mode + "/events"} />;
}
`,
  "islands/Follow.tsx": `import { useState } from "react";
import { useFeed } from "shell/runtime";

export default function Follow({ events }: { events: string }) {
  const [ticks, setTicks] = useState(0);
  const status = useFeed(events, {
    since: 0,
    on: { tick: () => setTicks((n) => n + 1) },
    retry: { firstMs: 250, maxMs: 4_000, steadyMs: 1_000 },
  });
  return <p id="status">{status} {ticks}</p>;
}
`,
};

/** The window each page's streams are counted over, from its first. */
const WINDOW_MS = 8_000;

Deno.test("useFeed backs off from a stream that fails before it was open steadyMs", async () => {
  const root = await builtCopy("live-backoff", FILES);
  await using server = await startServer({}, { root });
  await using browser = await launchBrowser();
  const modes = ["fails", "once", "steady"];
  const pages = await Promise.all(modes.map((mode) => follow(browser, server.origin, mode)));
  // Up to the end of the last page's window, bounded by it.
  const end = Math.max(...await Promise.all(pages.map((page) => page.end())));
  await new Promise((r) => setTimeout(r, end - Date.now()));
  const [fails, once, steady] = await Promise.all(pages.map((page) => page.counted()));
  await Promise.all(pages.map((page) => page.close()));

  for (const [mode, { opened, reopened }] of [["fails", fails], ["once", once]] as const) {
    // Opened at 0, then 0.125-0.25, 0.25-0.5, 0.5-1, 1-2, 2-4, 2-4 s after each failure: 6 to 8
    // in 8 s. Reopened at the server's `retry:` each time (the old pacing of `once`, which its
    // event counted as healthy), it made 20 and more, each 200-odd ms after the last failure.
    assert.ok(opened <= 9, `${mode}: opened ${opened} times in ${WINDOW_MS} ms (${reopened})`);
    assert.ok(Math.max(...reopened) >= 1_000, `${mode}: reopened after ${reopened} ms`);
    assert.ok(reopened.at(-1)! > reopened[0], `${mode}: reopened after ${reopened} ms`);
  }
  // Healthy each time (open past `steadyMs`), it gets the browser's quick reconnection after each
  // drop: backing off, the fourth came 1-2 s after its failure.
  assert.ok(steady.reopened.length >= 3, `steady: opened ${steady.opened} times`);
  assert.ok(
    steady.reopened.every((ms) => ms < 1_000),
    `steady: reopened after ${steady.reopened} ms`,
  );
  const failures = server.logs().filter((line) => line.level === "error");
  assert.ok(failures.length > 0, "the server logged the sources' failures");
});

/** Opens the page of `mode` in a context of its own; its streams' times come from the server. */
async function follow(browser: Browser, origin: string, mode: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/feed/${mode}`);
  await hydrated(page);
  const times = async (): Promise<{ opened: number[]; failed: number[] }> =>
    await (await fetch(`${origin}/feed/${mode}/times`)).json();
  // Hydrated, the island opens its stream at once.
  for (let waited = 0; (await times()).opened.length === 0; waited++) {
    assert.ok(waited < 200, `${mode}: no stream opened in 10 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    end: async () => (await times()).opened[0] + WINDOW_MS,
    /** How many streams opened in the window, and how long after each failure the next did. */
    counted: async () => {
      const { opened, failed } = await times();
      const within = opened.filter((time) => time - opened[0] < WINDOW_MS);
      const reopened = within.slice(1).map((time, i) => time - failed[i]);
      return { opened: within.length, reopened };
    },
    close: () => context.close(),
  };
}
