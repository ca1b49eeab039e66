/**
 * @module
 * Live guestbook pages in Chromium under `deno serve --parallel` (2 workers, one KV file): two
 * pages whose event streams are on different workers each show, over the stream they already had
 * open (no new connection, no reload), an entry signed in the other and one posted from outside; after the server goes away
 * and comes back, they show what was signed meanwhile (the stream reconnects, `Last-Event-ID`).
 * Over the signing limit, the island says to wait and keeps what was typed; without JavaScript the
 * form lands on a short page with a way back. A hidden page holds no stream and catches up when
 * shown.
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { append } from "../../../lib/kv/log.ts";
import { GUESTBOOK } from "../../../routes/_guestbook/entries.ts";
import { launchBrowser, pageErrors } from "../../helpers/browser.ts";
import {
  guestbookForm,
  signWithoutScript,
  startExample,
  workerNamingExample,
} from "../guestbook.ts";
import { tempStore } from "../../helpers/kv.ts";
import { serveParallel } from "../../helpers/parallel.ts";

interface LivePage {
  page: Page;
  /** The worker its event stream is on. */
  worker: string;
  errors: string[];
  /** True while no reload happened since the page was opened. */
  stillHere(): Promise<boolean>;
  /** How many event streams the page has asked for so far. */
  streams(): number;
}

/**
 * How long a page may take to show what its open stream carries: generous, for a loaded machine.
 * No timing is asserted: what shows the update came live is that it came over the stream already
 * open (`streams()` unchanged), where a page not told would only see it after a new one.
 */
const SHOWN_MS = 15_000;

/** Opens the guestbook in a context of its own (its own connections), once its stream is open. */
async function openLive(browser: Browser, url: string): Promise<LivePage> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = pageErrors(page);
  let streams = 0;
  page.on("request", (req) => {
    if (req.url().includes("/guestbook/events")) streams++;
  });
  const stream = page.waitForResponse((res) => res.url().includes("/guestbook/events"));
  stream.catch(() => {}); // should the page not load, that is the error to report
  await page.goto(url);
  const worker = (await stream).headers()["x-worker"];
  await page.evaluate(() => Object.assign(globalThis, { stillHere: true }));
  return {
    page,
    worker,
    errors,
    stillHere: () => page.evaluate(() => "stillHere" in globalThis),
    streams: () => streams,
  };
}

/** Waits (up to `ms`) until the page lists an entry with `message`. */
async function shows(page: Page, message: string, ms: number): Promise<void> {
  await page.locator("ol.entries q", { hasText: message }).waitFor({ timeout: ms });
}

Deno.test("live guestbook pages in Chromium", async (t) => {
  // One browser for the whole file: launching one costs more than most steps.
  await using browser = await launchBrowser();

  await t.step(
    "open guestbook pages update live across workers, and catch up after a drop",
    () => liveAcrossWorkers(browser),
  );
  await t.step(
    "over the signing limit: the island says to wait, and a form without JavaScript gets the page",
    () => overTheLimit(browser),
  );
  await t.step(
    "a hidden page holds no stream; shown again, it catches up at once",
    () => hiddenPage(browser),
  );
});

/** Two pages whose streams are on different workers: two opened side by side, more if need be. */
async function onBothWorkers(browser: Browser, url: string): Promise<[LivePage, LivePage]> {
  const open = await Promise.all([1, 2].map(() => openLive(browser, url)));
  for (let tries = 1; new Set(open.map((p) => p.worker)).size < 2; tries++) {
    assert.ok(tries < 20, "no page's stream landed on the other worker");
    open.push(await openLive(browser, url));
  }
  const a = open[0];
  const b = open.find((p) => p.worker !== a.worker)!;
  await Promise.all(open.filter((p) => p !== a && p !== b).map((p) => p.page.context().close()));
  return [a, b];
}

async function liveAcrossWorkers(browser: Browser) {
  const root = await workerNamingExample();
  await using store = await tempStore();
  const KV_PATH = store.path;
  let server = await serveParallel(root, { KV_PATH });
  try {
    const url = server.origin + "/guestbook";
    const [a, b] = await onBothWorkers(browser, url);

    // Signed in page A: page B shows it over the stream it had open, and neither reloaded.
    const opened = [a.streams(), b.streams()];
    await a.page.getByLabel("Name").fill("Ada");
    await a.page.getByLabel("Message").fill("Signed on one worker.");
    await a.page.getByRole("button", { name: "Sign" }).click();
    await shows(b.page, "Signed on one worker.", SHOWN_MS);

    // Posted from outside (a form without JavaScript): both show it.
    const form = await guestbookForm(server.origin);
    const posted = await signWithoutScript(server.origin, form, {
      name: "Grace",
      message: "Posted from elsewhere.",
    });
    await posted.body?.cancel();
    await Promise.all([a, b].map((p) => shows(p.page, "Posted from elsewhere.", SHOWN_MS)));
    assert.deepEqual([a.streams(), b.streams()], opened, "shown over the streams already open");
    for (const p of [a, b]) {
      assert.ok(await p.stillHere(), "the page was reloaded");
      assert.deepEqual(p.errors, []);
    }

    // The server goes away; meanwhile an entry is written; it comes back on the same port.
    const { port } = server;
    server.kill();
    await server.stop();
    const kv = await Deno.openKv(KV_PATH);
    await append(kv, GUESTBOOK, (id) => ({
      id,
      name: "Linus",
      message: "Signed while they were away.",
      at: new Date(),
    }));
    kv.close();
    server = await serveParallel(root, { KV_PATH }, port);
    // Generous: the pages retry on their own schedule (the browser's, then backing off).
    await Promise.all([a, b].map((p) => shows(p.page, "Signed while they were away.", 30_000)));
    for (const p of [a, b]) {
      assert.ok(await p.stillHere(), "the page was reloaded");
      const messages = await p.page.locator("ol.entries q").allTextContents();
      assert.deepEqual(messages, [
        "Signed while they were away.",
        "Posted from elsewhere.",
        "Signed on one worker.",
      ]);
      await p.page.context().close();
    }
  } finally {
    server.kill();
    await server.stop();
  }
}

async function overTheLimit(browser: Browser) {
  await using server = await startExample();
  const sign = async (page: Page, message: string) => {
    await page.getByLabel("Name").fill("Eager");
    await page.getByLabel("Message").fill(message);
    await page.getByRole("button", { name: "Sign" }).click();
  };

  const page = await browser.newPage();
  const streaming = page.waitForResponse((res) => res.url().includes("/guestbook/events"));
  await page.goto(server.origin + "/guestbook");
  await streaming;
  for (let i = 1; i <= 5; i++) {
    await sign(page, `Entry number ${i}.`);
    await page.getByRole("status").filter({ hasText: "Thank you, Eager!" }).waitFor();
    await shows(page, `Entry number ${i}.`, 5000);
    // This signing's own answer, which resets the form: the entry can show over the stream first,
    // and the status is still the last one's. Typed before that, the next message is wiped and an
    // empty form is sent.
    await page.waitForFunction(
      () => document.querySelector<HTMLTextAreaElement>("textarea[name=message]")?.value === "",
      undefined,
      { timeout: 5000 },
    );
  }
  await sign(page, "One too many.");
  await page.getByRole("status").filter({ hasText: "please wait a minute" }).waitFor();
  assert.equal(await page.getByLabel("Message").inputValue(), "One too many.", "the text is kept");
  assert.equal(await page.locator("html[data-failure]").count(), 0, "no failure screen");
  assert.equal(await page.locator("ol.entries q", { hasText: "One too many." }).count(), 0);

  // The same client without JavaScript: the form posts, and the answer is the calm page.
  const context = await browser.newContext({ javaScriptEnabled: false });
  const plain = await context.newPage();
  await plain.goto(server.origin + "/guestbook");
  await sign(plain, "Still too many.");
  await plain.getByRole("heading", { name: "That was a lot in a short time" }).waitFor();
  await plain.getByRole("link", { name: "Back to the page" }).click();
  await plain.waitForURL(server.origin + "/guestbook");
  await context.close();
  await page.close();
}

async function hiddenPage(browser: Browser) {
  await using server = await startExample();
  const page = await browser.newPage();
  const streaming = page.waitForResponse((res) => res.url().includes("/guestbook/events"));
  await page.goto(server.origin + "/guestbook");
  await streaming;
  const setHidden = (hidden: boolean) =>
    page.evaluate((hidden) => {
      Object.defineProperty(document, "hidden", { value: hidden, configurable: true });
      Object.defineProperty(document, "visibilityState", {
        value: hidden ? "hidden" : "visible",
        configurable: true,
      });
      document.dispatchEvent(new Event("visibilitychange"));
    }, hidden);
  const form = await guestbookForm(server.origin);
  const post = async (message: string) =>
    await (await signWithoutScript(server.origin, form, { name: "Bo", message })).body?.cancel();

  // Hidden, the page ends its stream.
  const ended = page.waitForEvent("requestfailed", {
    predicate: (req) => req.url().includes("/guestbook/events"),
    timeout: 5000,
  });
  await setHidden(true);
  await ended;
  // A page left visible shows the entry: by then a stream the hidden one still held would too.
  const witness = await openLive(browser, server.origin + "/guestbook");
  await post("Signed while nobody looked.");
  await shows(witness.page, "Signed while nobody looked.", SHOWN_MS);
  assert.equal(await page.locator("ol.entries q").count(), 0, "a hidden page got the entry");
  await witness.page.context().close();
  const reopened = page.waitForRequest((req) => req.url().includes("/guestbook/events?since=0"));
  await setHidden(false);
  await reopened;
  await shows(page, "Signed while nobody looked.", SHOWN_MS);
  await post("Signed while looking.");
  await shows(page, "Signed while looking.", SHOWN_MS);
  await page.close();
}
