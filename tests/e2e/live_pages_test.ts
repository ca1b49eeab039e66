/**
 * @module
 * Live pages in Chromium under `deno serve --parallel` (2 workers, one KV file), on the framework's
 * test app: two wall pages whose event streams are on different workers each show, without a reload,
 * a post made in the other and one made from outside (nothing polls: only KV's watch can bring it;
 * the bound is loose, since a loaded machine's Chromium alone can take a second - how fast an update
 * reaches open pages is `bench/collections.ts`'s figure); after the server goes
 * away and comes back, they show what was posted meanwhile (`EventSource` reconnects with
 * `Last-Event-ID`). Over a folder's rate limit, a form posted without JavaScript lands on a short
 * page with a way back.
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { append } from "../../lib/kv/log.ts";
import { WALL } from "../fixture/routes/_wall/posts.ts";
import { launchBrowser, pageErrors } from "../helpers/browser.ts";
import { tempStore } from "../helpers/kv.ts";
import { serveParallel, workerNamingProject } from "../helpers/parallel.ts";
import { startServer } from "../helpers/server.ts";
import { postWithoutScript } from "../helpers/wall.ts";

Deno.test("live pages in Chromium", async (t) => {
  // One browser for the whole file: launching one costs more than most steps.
  await using browser = await launchBrowser();

  await t.step(
    "open pages update live across workers, and catch up after a drop",
    () => liveAcrossWorkers(browser),
  );
  await t.step(
    "over a rate limit, a form without JavaScript gets a short page with a way back",
    () => overTheLimit(browser),
  );
});

/** How long a post may take to show on an open page: loose, not a latency figure (see above). */
const LIVE_MS = 5_000;

interface LivePage {
  page: Page;
  /** The worker its event stream is on. */
  worker: string;
  errors: string[];
  /** True while no reload happened since the page was opened. */
  stillHere(): Promise<boolean>;
}

/** Opens the wall in a context of its own (its own connections), once its stream is open. */
async function openLive(browser: Browser, url: string): Promise<LivePage> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = pageErrors(page);
  const stream = page.waitForResponse((res) => res.url().includes("/wall/events"));
  stream.catch(() => {}); // should the page not load, that is the error to report
  await page.goto(url);
  const worker = (await stream).headers()["x-worker"];
  await page.evaluate(() => Object.assign(globalThis, { stillHere: true }));
  return {
    page,
    worker,
    errors,
    stillHere: () => page.evaluate(() => "stillHere" in globalThis),
  };
}

/** Waits (up to `ms`) until the page lists a post with `message`. */
async function shows(page: Page, message: string, ms: number): Promise<void> {
  await page.locator("ol q", { hasText: message }).waitFor({ timeout: ms });
}

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
  const root = await workerNamingProject();
  await using store = await tempStore();
  const KV_PATH = store.path;
  let server = await serveParallel(root, { KV_PATH });
  try {
    const url = server.origin + "/wall";
    const [a, b] = await onBothWorkers(browser, url);

    // Posted in page A: page B shows it, and neither reloaded.
    await a.page.getByLabel("Name").fill("Ada");
    await a.page.getByLabel("Message").fill("Posted on one worker.");
    await a.page.getByRole("button", { name: "Post" }).click();
    await shows(b.page, "Posted on one worker.", LIVE_MS);

    // Posted from outside (a form without JavaScript): both show it.
    const posted = await postWithoutScript(server.origin, {
      name: "Grace",
      message: "Posted from elsewhere.",
    });
    await posted.body?.cancel();
    await Promise.all([a, b].map((p) => shows(p.page, "Posted from elsewhere.", LIVE_MS)));
    for (const p of [a, b]) {
      assert.ok(await p.stillHere(), "the page was reloaded");
      assert.deepEqual(p.errors, []);
    }

    // The server goes away; meanwhile a post is written; it comes back on the same port.
    const { port } = server;
    server.kill();
    await server.stop();
    const kv = await Deno.openKv(KV_PATH);
    await append(kv, WALL, (id) => ({
      id,
      name: "Linus",
      message: "Posted while they were away.",
      at: new Date(),
    }));
    kv.close();
    server = await serveParallel(root, { KV_PATH }, port);
    // Generous: the pages' EventSource retries on the browser's own schedule.
    await Promise.all([a, b].map((p) => shows(p.page, "Posted while they were away.", 30_000)));
    for (const p of [a, b]) {
      assert.ok(await p.stillHere(), "the page was reloaded");
      const messages = await p.page.locator("ol q").allTextContents();
      assert.deepEqual(messages, [
        "Posted while they were away.",
        "Posted from elsewhere.",
        "Posted on one worker.",
      ]);
      await p.page.context().close();
    }
  } finally {
    server.kill();
    await server.stop();
  }
}

async function overTheLimit(browser: Browser) {
  await using server = await startServer();
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  for (let i = 1; i <= 6; i++) {
    await page.goto(server.origin + "/wall");
    await page.getByLabel("Name").fill("Eager");
    await page.getByLabel("Message").fill(`Post number ${i}.`);
    await page.getByRole("button", { name: "Post" }).click();
    if (i <= 5) await page.waitForURL(server.origin + "/wall");
  }
  await page.getByRole("heading", { name: "That was a lot in a short time" }).waitFor();
  await page.getByRole("link", { name: "Back to the page" }).click();
  await page.waitForURL(server.origin + "/wall");
  assert.equal(await page.locator("ol q", { hasText: "Post number 6." }).count(), 0);
  await context.close();
}
