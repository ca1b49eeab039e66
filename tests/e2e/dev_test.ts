/**
 * `deno task dev` in Chromium, on a copy of the framework's test app: islands update in place on
 * save with their state kept (or reload when they cannot), stylesheets swap, every page reloads
 * after a save, and errors show at their source. Waits are for events (a load, a DOM change), each with a
 * generous bound: the machine is shared. Timings are printed, not asserted.
 */
import assert from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import type { Page } from "playwright-core";
import type { Manifest } from "../../lib/server.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { copyProject, type ProjectCopy } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";

/** Bound on a save showing in the browser: rebuild, maybe a server restart, the update. */
const SHOWN_MS = 20_000;

/** An island that breaks on demand, on a page whose handler can throw. */
const FIXTURES = {
  "islands/Boom.tsx": `import { useState } from "react";

function explode(): never {
  throw new Error("Exploded while rendering");
}

/** Breaks on demand: in an event handler, or while rendering. */
export default function Boom() {
  const [exploded, setExploded] = useState(false);
  if (exploded) explode();
  return (
    <p>
      <button type="button" onClick={() => {
        throw new Error("Oops in a handler");
      }}>Oops</button>
      <button type="button" onClick={() => setExploded(true)}>Explode</button>
    </p>
  );
}
`,
  "routes/boom.tsx": `import Boom from "../islands/Boom.tsx";
import type { Handlers } from "../lib/mod.ts";

export const handler: Handlers = {
  GET(req, ctx) {
    if (new URL(req.url).searchParams.has("throw")) lookUp(req.url);
    return ctx.render();
  },
};

function lookUp(url: string): never {
  throw new TypeError(\`nothing at \${url}\`);
}

export default function BoomPage() {
  return (
    <>
      <h1>Boom</h1>
      <Boom />
    </>
  );
}
`,
  // A stylesheet of static/, linked by hand.
  "static/sheet.css": "p { margin: 1em 0; }\n",
  "routes/sheet.tsx": `export default function SheetPage() {
  return (
    <>
      <link rel="stylesheet" href="/sheet.css" />
      <h1>A stylesheet of static/</h1>
    </>
  );
}
`,
};

Deno.test("deno task dev: saves show in the open pages, errors at their source", async (t) => {
  await using copy = await copyProject();
  for (const [path, source] of Object.entries(FIXTURES)) await copy.write(path, source);
  await using server = await startServer({ NODE_ENV: "development" }, {
    root: copy.root,
    script: "lib/cli/dev.ts",
  });
  await using browser = await launchBrowser();
  // One profile, as a developer's browser has: a context costs Chromium more than a page does, and
  // its pages share the cache (the dev server answers with ETags).
  const tabs = await browser.newContext();
  const edit = editor(copy);

  await t.step("every page carries the dev client, right after <head>", async () => {
    for (const path of ["/", "/counter", "/no-such-page"]) {
      const html = await (await server.fetch(path, { headers: { Accept: "text/html" } })).text();
      assert.match(
        html,
        /^<!DOCTYPE html><html lang="en"><head><script type="module" async src="\/_app\/dev\/client\.js\?session=[\w-]+&amp;version=\d+&amp;styles=\d+"><\/script>/,
      );
    }
    // What a script fetches is left as the app answered it.
    const fetched = { "Sec-Fetch-Dest": "empty", Accept: "*/*" };
    assert.doesNotMatch(
      await (await server.fetch("/", { headers: fetched })).text(),
      /dev\/client/,
    );
    const refused = await server.fetch("/admin", { headers: fetched });
    assert.match(refused.headers.get("Content-Type")!, /^text\/plain/);
    assert.equal(await refused.text(), "Unauthorized");
  });

  await t.step("an island edit shows in every open page, its state kept", async () => {
    const pages = [await tabs.newPage(), await tabs.newPage()];
    for (const page of pages) {
      await page.goto(server.origin + "/counter");
      await incrementUntil(page, "5");
      await mark(page);
    }
    const shown = pages.map((page) =>
      page.waitForFunction(
        () => document.querySelector("dt")?.textContent === "since (edited)" && Date.now(),
        undefined,
        { polling: "raf", timeout: SHOWN_MS },
      )
    );
    const savedAt = Date.now();
    await edit("islands/Counter.tsx", "<dt>since</dt>", "<dt>since (edited)</dt>");
    const at = await Promise.all(shown.map(async (s) => (await s).jsonValue() as Promise<number>));
    console.log(`  save → updated island: ${at.map((ms) => ms - savedAt).join(" ms, ")} ms`);
    for (const page of pages) {
      assert.equal(await page.locator("output").textContent(), "5");
      assert.ok(await marked(page), "the page did not reload");
    }
    await pages[1].close();
    // The new behaviour too, and the server renders the new island on the next load.
    await updatedAfter(
      pages[0],
      () => edit("islands/Counter.tsx", "setCount((n) => n + 1)", "setCount((n) => n + 10)"),
    );
    await pages[0].getByRole("button", { name: "Increment" }).click();
    assert.equal(await pages[0].locator("output").textContent(), "15");
    assert.ok(await marked(pages[0]), "the page did not reload");
    await pages[0].reload();
    assert.equal(await pages[0].locator("dt").first().textContent(), "since (edited)");
    await pages[0].close();
  });

  await t.step("an edit that cannot apply in place reloads: hooks, a non-component", async () => {
    const page = await tabs.newPage();
    await page.goto(server.origin + "/counter");
    await incrementUntil(page, "13");
    await mark(page);
    await reloadsAfter(
      page,
      () => edit("islands/Counter.tsx", "useState(start);", "useState(start);\n  useState(0);"),
      { selector: "output", text: /^3$/ },
    );
    await mark(page);
    const limit = "export const LIMIT = 10;\n";
    await reloadsAfter(
      page,
      () =>
        edit("islands/Counter.tsx", "export default function", `${limit}export default function`),
    );
    // Components only again: that applies in place.
    await mark(page);
    await updatedAfter(page, () => edit("islands/Counter.tsx", limit, ""));
    assert.ok(await marked(page), "the page did not reload");
    await page.close();
  });

  await t.step(
    "a stylesheet edit in static/ swaps it without a reload; a reload gets the new one",
    async () => {
      const page = await tabs.newPage();
      await page.goto(server.origin + "/sheet");
      await mark(page);
      const color = () =>
        page.evaluate(() => getComputedStyle(document.querySelector("h1")!).color);
      assert.notEqual(await color(), "rgb(1, 2, 3)");
      const swapped = page.waitForFunction(
        () =>
          getComputedStyle(document.querySelector("h1")!).color === "rgb(1, 2, 3)" && Date.now(),
        undefined,
        { polling: "raf", timeout: SHOWN_MS },
      );
      const savedAt = Date.now();
      await copy.write(
        "static/sheet.css",
        await read(copy, "static/sheet.css") + "h1 { color: rgb(1, 2, 3); }\n",
      );
      console.log(
        `  save → stylesheet swapped: ${
          (await (await swapped).jsonValue() as number) - savedAt
        } ms`,
      );
      assert.ok(await marked(page), "the page did not reload");
      // The old link goes on the new one's `load` event, which can come a task after the new
      // sheet already styles the page: waited for, bounded, not counted at once.
      await page.waitForFunction(
        () => document.querySelectorAll("link[rel=stylesheet][href*='/sheet.css']").length === 1,
        undefined,
        { timeout: SHOWN_MS },
      );
      await page.reload();
      assert.equal(await color(), "rgb(1, 2, 3)");
      await page.close();
    },
  );

  await t.step(
    "a stylesheet edit made before a page's event stream opened still reaches it",
    async () => {
      // The late page's stream is held until a page already listening took the swap.
      const late = await tabs.newPage();
      let open!: () => void;
      const held = new Promise<void>((resolve) => open = resolve);
      await late.route("**/_dev/events", async (route) => {
        await held;
        await route.continue();
      });
      await late.goto(server.origin + "/sheet");
      await mark(late);
      const listening = await tabs.newPage();
      const streamOpen = listening.waitForResponse((res) => res.url().includes("/_dev/events"));
      await listening.goto(server.origin + "/sheet");
      await streamOpen;
      const colorOf = (page: Page) =>
        page.evaluate(() => getComputedStyle(document.querySelector("h1")!).color);
      const shows = (page: Page) =>
        page.waitForFunction(
          () => getComputedStyle(document.querySelector("h1")!).color === "rgb(4, 5, 6)",
          undefined,
          { polling: "raf", timeout: SHOWN_MS },
        );
      assert.notEqual(await colorOf(late), "rgb(4, 5, 6)");
      await copy.write(
        "static/sheet.css",
        await read(copy, "static/sheet.css") + "h1 { color: rgb(4, 5, 6); }\n",
      );
      await shows(listening);
      assert.notEqual(await colorOf(late), "rgb(4, 5, 6)", "the late page heard nothing yet");
      open();
      await shows(late);
      assert.ok(await marked(late), "the page did not reload");
      await Promise.all([late.close(), listening.close()]);
    },
  );

  await t.step(
    "a browser error names the island's file and line, on screen and in the console",
    async () => {
      const page = await tabs.newPage();
      const messages = consoleOf(page);
      await page.goto(server.origin + "/boom");
      const boom = await read(copy, "islands/Boom.tsx");
      const handlerLine = lineOf(boom, 'throw new Error("Oops in a handler")');
      const renderLine = lineOf(boom, 'throw new Error("Exploded while rendering")');

      await clickUntilLogged(page, "Oops", messages, "[dev] uncaught error, at its source:");
      const handler = messages.find((text) => text.startsWith("[dev] uncaught error"))!;
      assert.match(
        handler,
        new RegExp(
          `Oops in a handler\\n\\s+at onClick \\(islands/Boom\\.tsx:${handlerLine}:\\d+\\)`,
        ),
      );
      assert.doesNotMatch(handler, /_app\/|node_modules|lib\/client/);

      await page.getByRole("button", { name: "Explode" }).click();
      const details = page.locator("main pre");
      await details.filter({ hasText: "islands/Boom.tsx" }).waitFor({ timeout: SHOWN_MS });
      const shown = (await details.textContent())!;
      assert.match(
        shown,
        new RegExp(
          `^Error: Exploded while rendering\\n\\s+at explode \\(islands/Boom\\.tsx:${renderLine}:\\d+\\)\\n\\s+at Boom \\(islands/Boom\\.tsx:\\d+:\\d+\\)$`,
        ),
      );
      assert.ok(
        messages.includes(`[dev] the page failed, at its source:\n${shown}`),
        messages.join("\n"),
      );
      await page.close();
    },
  );

  await t.step(
    "server actions pass the same-origin check, with JavaScript on and off",
    async () => {
      const page = await tabs.newPage();
      await page.goto(server.origin + "/wall");
      await mark(page);
      // A click before hydration submits the form without JavaScript: sign once hydrated.
      await page.waitForFunction(() =>
        Object.keys(document.querySelector("app-island form")!).some((key) =>
          key.startsWith("__react")
        )
      );
      await post(page, "Ada", "Posted through the dev server.");
      await page.getByRole("status").filter({ hasText: "Posted as Ada." }).waitFor();
      assert.ok(await marked(page), "posted in place");
      await page.close();

      const noScript = await browser.newContext({ javaScriptEnabled: false });
      const form = await noScript.newPage();
      await form.goto(server.origin + "/wall");
      await post(form, "Grace", "Posted with JavaScript off.");
      await form.locator("q", { hasText: "Posted with JavaScript off." }).waitFor();
      assert.equal(new URL(form.url()).pathname, "/wall");
      await noScript.close();
    },
  );

  await t.step("a middleware's 401 reloads after a save", async () => {
    // Chromium shows a 401's page once the credentials it has are refused.
    const context = await browser.newContext({
      httpCredentials: { username: "admin", password: "wrong" },
    });
    const page = await context.newPage();
    const res = await page.goto(server.origin + "/admin");
    assert.equal(res?.status(), 401);
    assert.equal(await page.locator("pre").textContent(), "Unauthorized");
    await reloadsAfter(
      page,
      () => edit("routes/admin/index.tsx", "<h1>Admin</h1>", "<h1>Admin!</h1>"),
    );
    await context.close();
  });

  await t.step("the not-found page reloads after a save", async () => {
    const page = await tabs.newPage();
    const res = await page.goto(server.origin + "/no-such-page");
    assert.equal(res?.status(), 404);
    await mark(page);
    await reloadsAfter(
      page,
      () => edit("routes/_404.tsx", "<h1>Page not found</h1>", "<h1>Lost</h1>"),
      { selector: "h1", text: /^Lost$/ },
    );
    await page.close();
  });

  await t.step(
    "a route edit reloads; its syntax error shows at its line; the fix recovers",
    async () => {
      const page = await tabs.newPage();
      await page.goto(server.origin + "/counter");
      await reloadsAfter(
        page,
        () => edit("routes/counter.tsx", "<h1>An island</h1>", "<h1>Edited</h1>"),
        { selector: "h1", text: /^Edited$/ },
      );

      await reloadsAfter(
        page,
        () => edit("routes/counter.tsx", "<h1>Edited</h1>", "<h1>Broken</h1"),
        { selector: "h1", text: /^The server could not start$/ },
      );
      const details = (await page.locator("pre").textContent())!;
      const broken = lineOf(await read(copy, "routes/counter.tsx"), "<h1>Broken</h1");
      const at = details.match(/^SyntaxError: .+\n[^]*\n\s+at routes\/counter\.tsx:(\d+):\d+$/);
      assert.ok(at, details);
      // Where the parser gave up: the broken line or one of the next.
      assert.ok(Number(at[1]) >= broken && Number(at[1]) <= broken + 3, details);
      assert.doesNotMatch(details, /TypeError|Uncaught|lib\/|file:/);

      await reloadsAfter(
        page,
        () => edit("routes/counter.tsx", "<h1>Broken</h1", "<h1>Fixed</h1>"),
        { selector: "h1", text: /^Fixed$/ },
      );
      await page.close();
    },
  );

  await t.step(
    "a route that throws shows its own frames; a framework edit reloads it",
    async () => {
      const page = await tabs.newPage();
      const res = await page.goto(server.origin + "/boom?throw");
      assert.equal(res?.status(), 500);
      const source = await read(copy, "routes/boom.tsx");
      const details = (await page.locator("main pre").textContent())!;
      const expected = `^TypeError: nothing at ${server.origin}/boom\\?throw\n` +
        `\\s+at lookUp \\(routes/boom\\.tsx:${lineOf(source, "throw new TypeError")}:\\d+\\)\n` +
        `\\s+at GET \\(routes/boom\\.tsx:${lineOf(source, "lookUp(req.url)")}:\\d+\\)$`;
      assert.match(details, new RegExp(expected));
      // A framework edit reloads with the new framework (no server started before it serves).
      await reloadsAfter(
        page,
        () =>
          edit("lib/errors/screen.ts", "a server-side exception has", "a server-side failure has"),
        { selector: "h1", text: /^Application error: a server-side failure has occurred / },
      );
      await page.close();
    },
  );

  await t.step(
    "a framework save during an earlier save's rebuild: that save's restart runs it",
    async () => {
      const page = await tabs.newPage();
      await page.goto(server.origin + "/boom?throw");
      await mark(page);
      const loaded = page.waitForEvent("load", { timeout: SHOWN_MS });
      const before = server.stdout.length;
      await edit("routes/boom.tsx", "<h1>Boom</h1>", "<h1>Boom!</h1>");
      // A change of its own, its build under way, when the framework is saved: its server starts
      // after that save was seen, and must not be the spare that loaded the framework before it.
      await lineAfter(server.stdout, before, "dev: changed routes/boom.tsx");
      await edit("lib/errors/screen.ts", "a server-side failure has", "a server-side fault has");
      await loaded;
      // The framework save's own restart reloads it once more: awaited, so it lands in no later step.
      const again = page.waitForEvent("load", { timeout: SHOWN_MS });
      assert.ok(!(await marked(page)), "the page reloaded");
      assert.match((await page.locator("h1").textContent())!, /a server-side fault has occurred/);
      await again;
      assert.match((await page.locator("h1").textContent())!, /a server-side fault has occurred/);
      await page.close();
    },
  );

  await t.step(
    "an island's syntax error shows over the page; its fix updates in place",
    async () => {
      const page = await tabs.newPage();
      await page.goto(server.origin + "/counter");
      await incrementUntil(page, "23");
      await mark(page);
      await edit("islands/Counter.tsx", "useState(start);", "useState(start;");
      const overlay = page.locator("#app-dev-overlay");
      await overlay.waitFor({ timeout: SHOWN_MS });
      const line = lineOf(await read(copy, "islands/Counter.tsx"), "useState(start;");
      assert.match(
        (await overlay.locator("pre").textContent())!,
        new RegExp(`islands/Counter\\.tsx:${line}:\\d+:`),
      );
      await edit("islands/Counter.tsx", "useState(start;", "useState(start);");
      await overlay.waitFor({ state: "detached", timeout: SHOWN_MS });
      assert.equal(await page.locator("output").textContent(), "23");
      assert.ok(await marked(page), "the page did not reload");
      await page.close();
    },
  );
});

Deno.test("production pages and assets carry nothing of the dev server", async () => {
  await using server = await startServer();
  for (const path of ["/", "/counter", "/no-such-page", "/admin"]) {
    const html = await (await server.fetch(path, { headers: { Accept: "text/html" } })).text();
    assert.ok(!/_dev|dev\/client|EventSource/.test(html), `${path}: ${html}`);
  }
  for (const path of ["/_dev/events", "/_app/dev/client.js", "/_app/dev/vendor.js"]) {
    const res = await server.fetch(path);
    assert.equal(res.status, 404, path);
    await res.body?.cancel();
  }
  const { assets } = (await import("../../_build/manifest.gen.ts")).default as Manifest;
  const chunks = [assets.boot, assets.sentry!, ...Object.values(assets.islands)];
  for (const url of new Set(chunks.flatMap((chunk) => [chunk.entry, ...chunk.imports]))) {
    const code = await (await server.fetch(url)).text();
    assert.ok(!/\$Refresh|__REFRESH__|\/_dev\/|\/_app\/dev\//.test(code), url);
  }
});

/**
 * Replaces `from` with `to` in a file of the copy, at once: written beside it, then renamed over it,
 * as editors that save safely do. Written in place, a save can be seen as two changes - the file
 * truncated, then written - when the writer stalls between them on a loaded machine, and the
 * second restarts the server once more, its reload landing in a later step.
 */
function editor(copy: ProjectCopy) {
  return async (path: string, from: string, to: string) => {
    const text = await read(copy, path);
    assert.ok(text.includes(from), `${path} contains ${from}`);
    const target = join(copy.root, path);
    // A dot file: the dev server's watcher takes it for an editor's and ignores it.
    const temporary = join(dirname(target), `.${basename(target)}.saving`);
    await Deno.writeTextFile(temporary, text.replace(from, to));
    await Deno.rename(temporary, target);
  };
}

function read(copy: ProjectCopy, path: string): Promise<string> {
  return Deno.readTextFile(join(copy.root, path));
}

function lineOf(source: string, text: string): number {
  return source.split("\n").findIndex((line) => line.includes(text)) + 1;
}

async function post(page: Page, name: string, message: string) {
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Message").fill(message);
  await page.getByRole("button", { name: "Post" }).click();
}

/** Marks the page's window: a reload takes the mark away, an update in place does not. */
async function mark(page: Page) {
  await page.evaluate(() => Object.assign(globalThis, { devTestMark: true }));
}

async function marked(page: Page): Promise<boolean> {
  return await page.evaluate(() => "devTestMark" in globalThis);
}

/**
 * Saves, and waits until the page has reloaded and, if `shown` says, shows the save (the text of
 * its first `selector`). Not merely the first load after the save: the reload an earlier save asked
 * for may still be on its way, and its page, from a server started before this save, shows the code
 * as it was. Under load that happens: the watcher sees a write that stalls between truncating the
 * file and writing it as two changes, and the second restarts the server once more, its reload
 * landing in the next step (a shake run took it for a framework edit's: the old failure screen).
 */
async function reloadsAfter(
  page: Page,
  save: () => Promise<void>,
  shown?: { selector: string; text: RegExp },
) {
  await mark(page);
  const loaded = page.waitForEvent("load", { timeout: SHOWN_MS });
  await save();
  await loaded;
  if (shown) {
    // Polled in each page the tab loads, until one that is not the marked one shows the save.
    await page.waitForFunction(
      ({ selector, source }) =>
        !("devTestMark" in globalThis) &&
        new RegExp(source).test(document.querySelector(selector)?.textContent ?? ""),
      { selector: shown.selector, source: shown.text.source },
      { timeout: SHOWN_MS },
    ).catch(async (error) => {
      const text = await page.locator(shown.selector).first().textContent().catch(() => null);
      throw new Error(`${shown.selector} never matched ${shown.text} (it shows ${text})`, {
        cause: error,
      });
    });
  }
  assert.ok(!(await marked(page)), "the page reloaded");
}

/** Waits (bounded) until `lines` has `line` at `from` or after. */
async function lineAfter(lines: string[], from: number, line: string) {
  const until = Date.now() + SHOWN_MS;
  while (!lines.slice(from).includes(line)) {
    if (Date.now() > until) assert.fail(`"${line}" not seen in ${SHOWN_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Saves, and waits until the dev client says it updated the page's islands in place. */
async function updatedAfter(page: Page, save: () => Promise<void>) {
  const updated = page.waitForEvent("console", {
    predicate: (message) => message.text().startsWith("[dev] updated "),
    timeout: SHOWN_MS,
  });
  await save();
  await updated;
}

/**
 * Clicks Increment until the island shows `count` (a click before hydration does nothing; one
 * after renders before `click()` returns: React flushes a discrete event's update at once).
 */
async function incrementUntil(page: Page, count: string) {
  await page.waitForFunction(
    (count) => {
      if (document.querySelector("output")!.textContent === count) return true;
      document.querySelector<HTMLButtonElement>("button[aria-label=Increment]")!.click();
      return false;
    },
    count,
    { timeout: SHOWN_MS, polling: 20 },
  );
}

/** The page's console messages, as they come. */
function consoleOf(page: Page): string[] {
  const messages: string[] = [];
  page.on("console", (message) => messages.push(message.text()));
  return messages;
}

/** Clicks a button until the console has a message starting with `text` (hydration first). */
async function clickUntilLogged(page: Page, name: string, console: string[], text: string) {
  const logged = () => console.some((message) => message.startsWith(text));
  for (let i = 0; i < 100 && !logged(); i++) {
    await page.getByRole("button", { name }).click();
    await page.waitForEvent("console", {
      predicate: (m) => m.text().startsWith(text),
      timeout: 200,
    })
      .catch(() => {});
  }
  assert.ok(logged(), `the console says ${text}`);
}
