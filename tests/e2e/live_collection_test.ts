/**
 * @module
 * `useLiveCollection` in Chromium, on the fixture of `helpers/live_fixture.ts` (a collection and
 * an island of the tests' own): with every connection cut again and again mid-stream by a proxy
 * while 150 changes are written, the page ends showing the collection as it is and its event
 * streams delivered each change exactly once, in order; a hidden page holds no stream, and shown
 * again gets what it missed, once; a page left for another and brought back from the back/forward
 * cache (it holds no connection there, and has no `unload` listener) resumes the same way; and
 * when the server goes away, the page backs off and opens the stream again itself, from where it
 * was, once the server is back; and streams that end at the end of their lifetime
 * (`EVENT_STREAM_LIFETIME_MS`) are opened again at once, with no change lost or repeated and no
 * status but `live` shown.
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { parse } from "devalue";
import type { Entity, Snapshot } from "../../lib/runtime.ts";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";
import { cuttingProxy } from "../helpers/cutting_proxy.ts";
import { readEvents } from "../helpers/events.ts";
import { type Card, cardsApi, liveProject } from "../helpers/live_fixture.ts";
import { tempStore } from "../helpers/kv.ts";
import { startServer } from "../helpers/server.ts";

/** Records what every EventSource of the page receives and how many were opened. */
const RECORDER = () => {
  const seen: { type: string; id: string }[] = [];
  let opened = 0; // EventSources made (the hook reopening)
  let opens = 0; // connections opened (the browser's own reconnections too)
  const Original = EventSource;
  class Recorded extends Original {
    constructor(url: string | URL, init?: EventSourceInit) {
      super(url, init);
      opened++;
      super.addEventListener("open", () => opens++);
    }
    override addEventListener(type: string, listener: EventListener, options?: unknown) {
      super.addEventListener(type, (event) => {
        seen.push({ type, id: (event as MessageEvent).lastEventId });
        listener.call(this, event);
      }, options as AddEventListenerOptions);
    }
  }
  Object.assign(globalThis, {
    EventSource: Recorded,
    liveLog: () => ({ seen, opened, opens }),
    persisted: [] as boolean[],
  });
  // Every status the page shows, in order.
  const statuses: string[] = [];
  Object.assign(globalThis, { statuses });
  new MutationObserver(() => {
    const status = document.getElementById("status")?.textContent;
    if (status && status !== statuses.at(-1)) statuses.push(status);
  }).observe(document, { subtree: true, childList: true, characterData: true });
  addEventListener("pageshow", (event) =>
    (globalThis as unknown as { persisted: boolean[] })
      .persisted.push(event.persisted));
};

/**
 * The page's timers of half a second or more, ten times shorter: the hook's backoff after each cut
 * (doubling, up to 30 s), which the cutting step sits through six times and does not measure
 * (live_backoff_test.ts does), and the 5 s a stream must stay open to count as healthy.
 */
const QUICK_TIMERS = () => {
  const timeout = globalThis.setTimeout;
  globalThis.setTimeout =
    ((run: TimerHandler, ms = 0, ...args: unknown[]) =>
      timeout(run, ms >= 500 ? ms / 10 : ms, ...args)) as typeof setTimeout;
};

type LiveLog = { seen: { type: string; id: string }[]; opened: number; opens: number };
const liveLog = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as { liveLog(): LiveLog }).liveLog());

/** The cards as the server has them now: the snapshot a stream without a number starts with. */
async function cardsNow(origin: string): Promise<{ seq: number; shown: string[] }> {
  await using stream = await readEvents(origin + "/cards/events");
  const [first] = await stream.waitFor(1);
  const snapshot = parse(first.data) as Snapshot<Card>;
  return {
    seq: snapshot.seq,
    shown: snapshot.items.map(({ value }) => `${value.title}:${value.column}:${value.moves}`),
  };
}

const shown = (page: Page) => page.locator("#cards li").allTextContents();

async function openCards(browser: Browser, origin: string, { quickTimers = false } = {}) {
  const context = await browser.newContext();
  await context.addInitScript(RECORDER);
  if (quickTimers) await context.addInitScript(QUICK_TIMERS);
  const page = await context.newPage();
  const errors = pageErrors(page);
  await page.goto(origin + "/cards");
  await hydrated(page);
  await page.locator("#status", { hasText: "live" }).waitFor();
  return { page, errors };
}

/** Asserts the page's streams delivered the changes after `from` up to `to`, each once, in order. */
async function assertEachOnce(page: Page, from: number, to: number) {
  const { seen } = await liveLog(page);
  const changes = seen.filter((event) => event.type === "change").map((event) => Number(event.id));
  assert.deepEqual(changes, Array.from({ length: to - from }, (_, i) => from + i + 1));
  assert.deepEqual(seen.filter((event) => event.type === "snapshot"), [], "no snapshot was needed");
}

Deno.test("useLiveCollection in Chromium", async (t) => {
  const root = await liveProject();
  await using server = await startServer({}, { root });
  await using browser = await launchBrowser({ backForwardCache: true });
  const write = (body: Record<string, unknown>) => cardsApi<Entity<Card>>(server.origin, body);
  const made: string[] = [];
  for (let i = 0; i < 5; i++) {
    made.push(
      (await write({ op: "create", card: { title: `c${i}`, column: "a", moves: 0 } })).body.id,
    );
  }

  await t.step(
    "connections cut mid-stream again and again: every change once, the page right",
    async () => {
      await using proxy = cuttingProxy({ hostname: "127.0.0.1", port: server.port });
      const { page, errors } = await openCards(browser, proxy.origin, { quickTimers: true });
      const start = (await cardsNow(server.origin)).seq;
      let writing = true;
      let cuts = 0;
      /** Waits until a cut after the `seen`th, bounded: a page that never reconnects fails here. */
      const cutSince = async (seen: number) => {
        for (let waited = 0; cuts <= seen; waited++) {
          assert.ok(waited < 1_200, `no stream to cut in 60 s after ${seen} cuts`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const cutter = (async () => {
        while (writing) {
          await new Promise((r) => setTimeout(r, 120 + Math.random() * 120));
          if (proxy.cutAll() > 0) cuts++;
        }
      })();
      for (let i = 0; i < 150; i++) {
        if (i % 3 === 0) {
          made.push(
            (await write({ op: "create", card: { title: `n${i}`, column: "a", moves: 0 } })).body
              .id,
          );
        } else if (i % 10 === 1) {
          await write({
            op: "delete",
            id: made.splice(i % made.length, 1)[0],
          });
        } else {await write({
            op: "move",
            id: made[i % made.length],
            column: ["a", "b"][i % 2],
          });}
        await new Promise((r) => setTimeout(r, 15));
        // However slow a loaded machine makes the writes or the page's reconnections: at least
        // one cut in every 25 writes, so that the changes land around six cuts, not after them.
        if (i % 25 === 24) await cutSince(cuts);
      }
      writing = false;
      await cutter;
      const now = await cardsNow(server.origin);
      // Generous: after a cut, the page may be backing off for a few seconds.
      await page.waitForFunction(
        (expected) =>
          JSON.stringify(
            [...document.querySelectorAll("#cards li")].map((li) => li.textContent),
          ) ===
            expected,
        JSON.stringify(now.shown),
        { timeout: 60_000 },
      );
      assert.deepEqual(await shown(page), now.shown);
      assert.ok(cuts >= 6, `${cuts} cuts`);
      const { opens } = await liveLog(page);
      assert.ok(opens >= 4, `the page's stream opened ${opens} times`);
      await assertEachOnce(page, start, now.seq);
      assert.deepEqual(errors.filter((e) => !/net::ERR|EventSource/.test(e)), []);
      await page.context().close();
    },
  );

  await t.step(
    "a hidden page holds no stream; shown again, it gets what it missed, once",
    async () => {
      const { page } = await openCards(browser, server.origin);
      const start = (await cardsNow(server.origin)).seq;
      const closed = page.waitForEvent("requestfailed", {
        predicate: (req) => req.url().includes("/cards/events"),
      });
      await page.evaluate(() => {
        Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });
        document.dispatchEvent(new Event("visibilitychange"));
      });
      await closed;
      await page.locator("#status", { hasText: "paused" }).waitFor();
      await write({ op: "move", id: made[0], column: "hidden" });
      await write({ op: "create", card: { title: "while hidden", column: "a", moves: 0 } });
      // A stream still open would have them by the time another page has.
      const witness = await openCards(browser, server.origin);
      assert.ok((await shown(witness.page)).includes("while hidden:a:0"));
      await witness.page.context().close();
      assert.ok(!(await shown(page)).includes("while hidden:a:0"), "the hidden page got it");
      await page.evaluate(() => {
        Object.defineProperty(document, "visibilityState", {
          value: "visible",
          configurable: true,
        });
        document.dispatchEvent(new Event("visibilitychange"));
      });
      await page.locator("#cards li", { hasText: "while hidden:a:0" }).waitFor();
      await assertEachOnce(page, start, start + 2);
      await page.context().close();
    },
  );

  await t.step(
    "left for another page and brought back from the back/forward cache: resumes",
    async () => {
      const { page } = await openCards(browser, server.origin);
      const start = (await cardsNow(server.origin)).seq;
      await page.goto(server.origin + "/about");
      await write({ op: "create", card: { title: "while away", column: "a", moves: 0 } });
      await page.goBack({ waitUntil: "commit" }); // a page restored from the cache fires no load
      await page.locator("#cards li", { hasText: "while away:a:0" }).waitFor();
      const persisted = await page.evaluate(() =>
        (globalThis as unknown as { persisted: boolean[] }).persisted
      );
      assert.deepEqual(persisted, [false, true], "restored from the back/forward cache");
      await assertEachOnce(page, start, start + 1);
      await page.context().close();
    },
  );

  await t.step(
    "the server goes away and comes back: the page backs off, opens again, misses nothing",
    async () => {
      await using store = await tempStore();
      const KV_PATH = store.path;
      let first = await startServer({ KV_PATH }, { root });
      const { page } = await openCards(browser, first.origin);
      const start = (await cardsNow(first.origin)).seq;
      const card = (title: string) => ({ op: "create", card: { title, column: "a", moves: 0 } });
      await cardsApi(first.origin, card("before"));
      await page.locator("#cards li", { hasText: "before:a:0" }).waitFor();
      const { port } = first;
      await first.stop();
      await page.locator("#status", { hasText: "retrying" }).waitFor();
      {
        // Written meanwhile, by another server on the same store.
        await using other = await startServer({ KV_PATH }, { root });
        await cardsApi(other.origin, card("meanwhile"));
      }
      first = await startServer({ KV_PATH }, { root, port });
      try {
        // Generous: the page is backing off, up to 30 s between tries.
        await page.locator("#cards li", { hasText: "meanwhile:a:0" }).waitFor({ timeout: 60_000 });
        await page.locator("#status", { hasText: "live" }).waitFor();
        const { opened } = await liveLog(page);
        assert.ok(opened >= 2, `the hook opened ${opened} streams`);
        await assertEachOnce(page, start, start + 2);
      } finally {
        await page.context().close();
        await first.stop();
      }
    },
  );

  await t.step(
    "streams end after their lifetime: opened again at once, every change once, always live",
    async () => {
      await using short = await startServer({ EVENT_STREAM_LIFETIME_MS: "1000" }, { root });
      const { page, errors } = await openCards(browser, short.origin);
      const start = (await cardsNow(short.origin)).seq;
      let written = 0;
      // Until the page has renewed its stream three times (each within about a second), bounded.
      for (let i = 0; i < 400 && (await liveLog(page)).opened < 4; i++) {
        await cardsApi(short.origin, {
          op: "create",
          card: { title: `l${i}`, column: "a", moves: 0 },
        });
        written++;
        await new Promise((r) => setTimeout(r, 25));
      }
      const { opened } = await liveLog(page);
      assert.ok(opened >= 4, `the hook opened ${opened} streams`);
      const now = await cardsNow(short.origin);
      assert.equal(now.seq, start + written);
      await page.locator("#cards li", { hasText: `l${written - 1}:a:0` }).waitFor();
      await assertEachOnce(page, start, now.seq);
      const statuses = await page.evaluate(() =>
        (globalThis as unknown as { statuses: string[] }).statuses
      );
      assert.deepEqual(statuses.slice(statuses.indexOf("live")), ["live"], "no drop shown");
      assert.deepEqual(errors, []);
      await page.context().close();
    },
  );
});
