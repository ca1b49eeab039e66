/**
 * @module
 * A live page whose reloads to the build its stream names keep bringing back the build it left -
 * an old worker answering during a rollout, a CDN's copy of a cached page kept for its `s-maxage` -
 * in Chromium, on the test app's wall: every stream it opens names another build, every reload
 * serves the same page again. Each reload waits twice as long as the last (10 s, 20 s, ... up to
 * 160 s), not 10 s each time for as long as that lasts. The waits are read, and cut short, from the
 * page's `setTimeout`: the test does not sit through them.
 */
import assert from "node:assert/strict";
import { Arrivals } from "../../lib/testing/arrivals.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { startServer } from "../helpers/server.ts";

/** The waits read: the first move, then six that came back. */
const MOVES = 7;

Deno.test("a reload that keeps bringing back the build it left waits longer each time", async () => {
  await using browser = await launchBrowser();
  const server = await startServer();
  try {
    const page = await (await browser.newContext()).newPage();
    const waits: number[] = [];
    const arrivals = new Arrivals();
    await page.exposeFunction("waited", (ms: number) => {
      waits.push(ms);
      arrivals.arrived();
      return waits.length < MOVES; // cut it short, until the last
    });
    await page.addInitScript(() => {
      const scope = globalThis as unknown as { waited(ms: number): Promise<boolean> };
      const get = Storage.prototype.getItem;
      let asked = false;
      // The page asks when it last reloaded for a new build, then sets the timer of the next.
      Storage.prototype.getItem = function (key) {
        if (key === "app-stale-reload") asked = true;
        return get.call(this, key);
      };
      const timeout = globalThis.setTimeout;
      globalThis.setTimeout = ((run: () => void, ms = 0) => {
        if (!asked) return timeout(run, ms);
        asked = false;
        scope.waited(ms).then((short) => short && run());
        return 0;
      }) as typeof setTimeout;
    });
    await page.route(/\/wall\/events/, (route) =>
      route.fulfill({
        contentType: "text/event-stream",
        body: "retry: 60000\n\nevent: app-build\ndata: another-build\n\n",
      }));
    await page.goto(`${server.origin}/wall`);
    await arrivals.until(() => waits.length >= MOVES || undefined, 60_000, () => `${waits}`);
    const [first, ...cameBack] = waits;
    assert.equal(first, 0, "the first move is at once");
    // Before, each came 10 s after the last: a reload every 10 s for as long as it lasted.
    assert.ok(cameBack[0] > 5_000 && cameBack[0] <= 10_000, `${waits}`);
    for (let i = 1; i < cameBack.length - 1; i++) {
      assert.ok(cameBack[i] > cameBack[i - 1] * 1.5, `each waits twice as long: ${waits}`);
    }
    assert.ok(cameBack.at(-1)! > 80_000 && cameBack.at(-1)! <= 160_000, `at most 160 s: ${waits}`);
  } finally {
    await server.stop();
  }
});
