/**
 * Sentry in Chromium, against a receiver on 127.0.0.1 that reads what the real `@sentry/react`
 * sends: the pageload continues the server's trace, the SDK loads only after the islands hydrated,
 * errors (also one from before the SDK loaded) are sent, same-origin fetches carry the trace to the
 * server, and the not-found page sends nothing. Every way an island breaks — its chunk gone, its
 * hydration or render throwing, a mismatch React recovers from — is sent with its kind.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { launchBrowser } from "../helpers/browser.ts";
import { fixtureProject } from "../helpers/fixtures.ts";
import { isErrorEvent, isTransaction, type ReceivedItem, startSentryReceiver } from "shell/testing";
import { startServer } from "../helpers/server.ts";
import { started } from "../helpers/wait.ts";

const traceOf = (item: ReceivedItem): string => item.payload.contexts.trace.trace_id;
const transaction = (name: string, op: string) => (item: ReceivedItem) =>
  isTransaction(item) && item.payload.transaction === name && item.payload.contexts.trace.op === op;

async function chunkTimings(tab: Page) {
  return await tab.evaluate(() =>
    performance.getEntriesByType("resource").map((e) => {
      const r = e as PerformanceResourceTiming;
      return { name: new URL(r.name).pathname, start: r.startTime, end: r.responseEnd };
    })
  );
}

/** Garbles every island's props as the page is parsed: decoding them, hydration throws. */
function garbleIslandProps() {
  new MutationObserver((records) => {
    for (const node of records.flatMap((record) => [...record.addedNodes])) {
      if (node instanceof Element && node.localName === "app-island") {
        node.setAttribute("props", "[garbled");
      }
    }
  }).observe(document, { childList: true, subtree: true });
}

/** Each way an island breaks (`lib/client/boot.ts`), the page it breaks on and what is sent. */
const BREAKS = [
  {
    what: "an island whose chunk is gone",
    path: "/island/lost",
    island: "Lost",
    kind: "island-load",
    message: /^Failed to fetch dynamically imported module: .*\/_app\/Lost-/,
  },
  {
    what: "an island whose hydration throws (its props do not decode)",
    path: "/island/click",
    island: "Clicker",
    kind: "hydration",
    message: /"\[garbled" is not valid JSON/,
    before: garbleIslandProps,
  },
  {
    what: "an island that throws while rendering",
    path: "/island/render",
    island: "BrowserOnlyBug",
    kind: "render",
    message: /^island render failure$/,
  },
  {
    what: "a hydration mismatch React recovers from",
    path: "/island/mismatch",
    kind: "recoverable",
    message: /^Minified React error #418;/,
    recovers: true,
  },
];

Deno.test("sentry (browser)", async (t) => {
  // One browser for the whole file: launching one costs more than most steps. Its pages share a
  // context: a context costs Chromium more than a page does.
  await using browser = await launchBrowser();
  const tabs = await browser.newContext();

  await t.step(
    "one trace from the server through the page and back",
    async (t) => {
      // The fixtures' Thrower island fetches and throws; Broken throws while rendering.
      const root = await fixtureProject();

      await using receiver = startSentryReceiver();
      await using server = await startServer(
        { SENTRY_DSN: receiver.dsn, SENTRY_TRACES_SAMPLE_RATE: "1" },
        { root },
      );
      const tab = await tabs.newPage();
      const consoleErrors: string[] = [];
      tab.on("console", (msg) => msg.type() === "error" && consoleErrors.push(msg.text()));

      await t.step("the not-found page sends nothing", async () => {
        const res = await tab.goto(server.origin + "/no/such/page");
        assert.equal(res?.status(), 404);
        await tab.waitForLoadState("load");
        // No script at all: nothing can load the SDK later.
        const scripts = await tab.locator('script:not([type="speculationrules"])').count();
        assert.equal(scripts, 0);
        // A request that is reported, after it: once its transaction is in, the 404's had its turn.
        await (await server.fetch("/about")).body?.cancel();
        await receiver.waitFor(transaction("GET /about", "http.server"));
        assert.deepEqual(
          receiver.items.map((i) => `${i.type} ${i.payload.transaction}`),
          ["transaction GET /about"],
        );
      });

      await t.step(
        "the pageload continues the server's trace; the SDK loads after hydration",
        async () => {
          await tab.goto(server.origin + "/thrower");
          const served = await receiver.waitFor(transaction("GET /thrower", "http.server"));
          const pageload = await receiver.waitFor(transaction("/thrower", "pageload"));
          assert.equal(traceOf(pageload), traceOf(served));
          assert.equal(
            pageload.payload.contexts.trace.parent_span_id,
            served.payload.contexts.trace.span_id,
          );

          const timings = await chunkTimings(tab);
          const sdk = timings.find((r) => r.name.startsWith("/_app/sentry-"));
          const island = timings.find((r) => r.name.startsWith("/_app/Thrower-"));
          assert.ok(sdk && island, JSON.stringify(timings));
          assert.ok(sdk.start >= island.end, "the SDK is fetched only after the island's chunk");
        },
      );

      await t.step("a same-origin fetch carries the trace to the server", async () => {
        const pageload = await receiver.waitFor(transaction("/thrower", "pageload"));
        await tab.getByRole("button", { name: "Fetch" }).click();
        await tab.waitForFunction(() => document.querySelector("output")?.textContent !== "");
        const api = await receiver.waitFor(transaction("GET /api/time", "http.server"));
        assert.equal(traceOf(api), traceOf(pageload));
      });

      await t.step("an error in an event handler is sent, in the same trace", async () => {
        const pageload = await receiver.waitFor(transaction("/thrower", "pageload"));
        await tab.getByRole("button", { name: "Throw" }).click();
        const event = await receiver.waitFor((i) =>
          isErrorEvent(i) && i.payload.exception.values[0].value === "island click failed"
        );
        assert.equal(traceOf(event), traceOf(pageload));
        assert.equal(event.payload.request.url, server.origin + "/thrower");
        // An error after it: once that one is in, a second copy of the first would be too.
        await tab.evaluate(() =>
          setTimeout(() => {
            throw new Error("a later error");
          })
        );
        await receiver.waitFor((i) =>
          isErrorEvent(i) && i.payload.exception.values[0].value === "a later error"
        );
        const copies = receiver.items.filter((i) =>
          isErrorEvent(i) && i.payload.exception.values[0].value === "island click failed"
        );
        assert.equal(copies.length, 1, "reported once");
      });

      await t.step("an island that fails before the SDK loaded is still reported", async () => {
        await tab.goto(server.origin + "/broken");
        await tab.getByText("a client-side exception has occurred").waitFor();
        const event = await receiver.waitFor((i) =>
          isErrorEvent(i) && i.payload.exception.values[0].value === "broken island"
        );
        assert.equal(event.payload.level, "fatal");
        assert.equal(event.payload.environment, "production");
      });

      // No CSP violation or SDK trouble along the way: the 404 and the thrown errors are the only ones.
      const expected = /island click failed|a later error|broken island|404 \(Not Found\)/;
      const unexpected = consoleErrors.filter((text) => !expected.test(text));
      assert.deepEqual(unexpected, []);
      await tab.close();
    },
  );

  await t.step(
    "through the tunnel; a page without islands sends nothing",
    async (t) => {
      await using receiver = startSentryReceiver();
      await using server = await startServer({
        SENTRY_DSN: receiver.dsn,
        SENTRY_TRACES_SAMPLE_RATE: "1",
        SENTRY_TUNNEL: "1",
      });
      /** A fresh tab, and the scripts it loads and what it posts (not what a page before it sent). */
      const watched = async () => {
        const tab = await tabs.newPage();
        const posts: string[] = [];
        const scripts: string[] = [];
        tab.on("request", (req) => {
          if (req.method() === "POST") posts.push(new URL(req.url()).pathname);
          if (req.resourceType() === "script") scripts.push(new URL(req.url()).pathname);
        });
        return { tab, posts, scripts };
      };

      await t.step("a page with islands sends through /_sentry", async () => {
        const { tab, posts } = await watched();
        await tab.goto(server.origin + "/counter");
        const served = await receiver.waitFor(transaction("GET /counter", "http.server"));
        const pageload = await receiver.waitFor(transaction("/counter", "pageload"));
        assert.equal(traceOf(pageload), traceOf(served));
        // The CSP admits only our own origin: the envelope can only have come through the tunnel.
        assert.deepEqual([...new Set(posts)], ["/_sentry"]);
      });

      await t.step("a page without islands loads no script, the SDK included", async () => {
        const { tab, posts, scripts } = await watched();
        await tab.goto(server.origin + "/about", { waitUntil: "load" });
        await receiver.waitFor(transaction("GET /about", "http.server"));
        // No script at all, inline or not: no code is there to load the SDK or send anything later.
        const inline = await tab.evaluate(() =>
          // Speculation rules are JSON for the browser, not a script that runs.
          document.querySelectorAll('script:not([type="speculationrules"])').length
        );
        assert.deepEqual(scripts, []);
        assert.equal(inline, 0);
        assert.deepEqual(posts, []);
        assert.equal(receiver.items.filter(transaction("/about", "pageload")).length, 0);
      });
    },
  );

  await t.step(
    "every way an island breaks is reported, by its kind",
    async (t) => {
      const root = await fixtureProject();
      await using receiver = startSentryReceiver();
      await using server = await startServer(
        { SENTRY_DSN: receiver.dsn, SENTRY_TRACES_SAMPLE_RATE: "1" },
        { root },
      );
      const sent: { path: string; event: ReceivedItem; served: ReceivedItem }[] = [];
      // Side by side: each page's pageload ends only after a second of idle time.
      const broken = BREAKS.map(({ path, before, recovers }) =>
        started(async () => {
          const tab = await tabs.newPage();
          if (before) await tab.addInitScript(before);
          await tab.goto(server.origin + path);
          let failureScreens = 0;
          if (recovers) {
            await tab.waitForFunction(() =>
              document.getElementById("side")?.textContent === "browser"
            );
            failureScreens = await tab.locator("html[data-failure]").count();
          } else {
            await tab.waitForSelector(`html[data-failure="client"]`);
          }
          const fromPage = (item: ReceivedItem) =>
            isErrorEvent(item) && item.payload.request.url === server.origin + path;
          const event = await receiver.waitFor(fromPage);
          // The page's pageload transaction comes after its errors: by then a second copy would be here.
          await receiver.waitFor(transaction(path, "pageload"));
          const copies = receiver.items.filter(fromPage).length;
          const served = await receiver.waitFor(transaction(`GET ${path}`, "http.server"));
          await tab.close();
          return { event, served, copies, failureScreens };
        })
      );

      for (const [i, { what, path, kind, message, recovers, island }] of BREAKS.entries()) {
        await t.step(`${what}: sent as "${kind}"`, async () => {
          const { event, served, copies, failureScreens } = await broken[i]();
          if (recovers) assert.equal(failureScreens, 0, "the page stays");
          const [exception] = event.payload.exception.values;
          assert.match(exception.value, message);
          assert.deepEqual(exception.mechanism, {
            type: `auto.browser.${kind}`,
            handled: !!recovers,
          });
          assert.equal(event.payload.tags.kind, kind);
          // Which island broke (none for a mismatch React recovers from: it names no island).
          assert.equal(event.payload.tags.island, island);
          assert.equal(event.payload.level, recovers ? "error" : "fatal");
          assert.equal(copies, 1, "reported once");
          sent.push({ path, event, served });
        });
      }

      await t.step("each of those errors is in the trace of its page's server request", () => {
        // The client-side failure screen replaced those pages, their trace's meta tags with them,
        // before the SDK started: the runtime kept the tags and put them back (`sentry_loader.ts`).
        const outside = sent.filter(({ event, served }) => traceOf(event) !== traceOf(served));
        assert.deepEqual(outside.map(({ path }) => path), []);
      });
    },
  );
});
