/**
 * @module
 * `useFeed`'s backoff in Chromium, on a built copy with a page and streams of the test's own: a
 * stream whose source fails as soon as it opens (the server logs the failure and ends the stream)
 * is not healthy, so the page opens it again later each time (about 1, 2, 4 s: a handful of
 * requests in 10 s, not one a second for as long as the page is open), while a stream that
 * delivers an event before it fails is, so the page opens it again after about a second each time.
 * Both pages run side by side, over the same window of their own. That a stream ending by design
 * (`renew`) is opened again at once, with no drop shown, is `live_collection_test.ts`'s.
 */
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { hydrated, launchBrowser } from "../helpers/browser.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { startServer } from "../helpers/server.ts";

const FILES: Record<string, string> = {
  // `fails`: the source throws at once, after the stream opened (its `retry:` preamble is sent).
  // `once`: it sends one event first, then throws.
  "routes/feed/[mode]/events.ts": `import type { Handlers } from "shell";
import { eventStream } from "shell";

export const handler: Handlers = {
  GET(req, ctx) {
    const mode = ctx.params.mode;
    return eventStream(req, ctx, async function* () {
      if (mode === "once") yield { id: Date.now(), event: "tick", data: "" };
      throw new Error("the feed's source failed");
    });
  },
};
`,
  "routes/feed/[mode].tsx": `import Follow from "@/islands/Follow.tsx";
import type { PageProps } from "shell";

export default function Page({ params }: PageProps) {
  return <Follow events={"/feed/" + params.mode + "/events"} />;
}
`,
  "islands/Follow.tsx": `import { useState } from "react";
import { useFeed } from "shell/runtime";

export default function Follow({ events }: { events: string }) {
  const [ticks, setTicks] = useState(0);
  const status = useFeed(events, { since: 0, on: { tick: () => setTicks((n) => n + 1) } });
  return <p id="status">{status} {ticks}</p>;
}
`,
};

/** The window each page's stream requests are counted over, from its first. */
const WINDOW_MS = 10_000;

Deno.test("useFeed backs off from a stream that fails as it opens", async () => {
  const root = await builtCopy("live-backoff", FILES);
  await using server = await startServer({}, { root });
  await using browser = await launchBrowser();
  const [fails, once] = await Promise.all(
    ["fails", "once"].map((mode) => follow(browser, `${server.origin}/feed/${mode}`)),
  );
  // Up to the end of the later page's window, bounded by it.
  await new Promise((r) => setTimeout(r, Math.max(fails.end(), once.end()) - Date.now()));
  const failing = fails.counted();
  const healthy = once.counted();
  // Opened at 0, then after 0.5-1, 1-2, 2-4 and 4-8 s: 4, or 5 at the shortest jitter; one a
  // second (the old pacing) made 9-10.
  assert.ok(failing >= 2 && failing <= 5, `the failing stream was requested ${failing} times`);
  // Healthy each time (it delivered an event), it is reopened after about a second: on a loaded
  // machine each try takes longer, so only compared with the failing one's, side by side.
  assert.ok(
    healthy >= failing + 2,
    `the stream that delivered events was requested ${healthy} times, the failing one ${failing}`,
  );
  const failures = server.logs().filter((line) => line.level === "error");
  assert.ok(failures.length > 0, "the server logged the source's failures");
  await Promise.all([fails, once].map((page) => page.close()));
});

/** Opens `url` in a context of its own and times its stream's requests. */
async function follow(browser: Browser, url: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const times: number[] = [];
  page.on("request", (req) => {
    if (req.url().includes("/events")) times.push(Date.now());
  });
  await page.goto(url);
  await hydrated(page);
  // Hydrated, the island opens its stream at once.
  for (let waited = 0; times.length === 0; waited++) {
    assert.ok(waited < 200, `${url}: no stream opened in 10 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    end: () => times[0] + WINDOW_MS,
    counted: () => times.filter((time) => time - times[0] < WINDOW_MS).length,
    close: () => context.close(),
  };
}
