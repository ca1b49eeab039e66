/**
 * @module
 * An open tab's event stream across a deploy, in Chromium, with a real deploy: a copy of the test
 * app with a live island of this test's own is built and served, a tab follows its stream, then the
 * sources are edited - the stream's events change shape, the island with them - rebuilt in place
 * and the server restarted on the same port and KV store. The old tab's `EventSource` reconnects
 * to the new build, whose events the old island's code cannot read: it must not be fed them (an
 * island rendering `undefined` where the text was is a silent wrong result); the page moves to
 * the new version, with what was typed kept, never the failure screen. And a link another tab
 * hovered before the deploy (prefetched by the speculation rules) shows, once followed after it,
 * the old version's page, as an old tab; the next navigation loads the new one. A page out of date
 * again at once (a rollout under way) waits 10 s before the next reload: what is typed meanwhile
 * is kept too.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { launchBrowser } from "../helpers/browser.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { copyProject } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";

/** The first version: the tab's. Its stream sends `{ text }`, once, then holds the stream open. */
const V1: Record<string, string> = {
  "routes/ticker/events.ts": `import { eventStream } from "shell";

export const handler = {
  GET(req: Request, ctx: never) {
    return eventStream(req, ctx, async function* (signal) {
      yield { event: "tick", data: JSON.stringify({ text: "tick from v1" }) };
      await new Promise((resolve) => signal.addEventListener("abort", resolve));
    });
  },
};
`,
  "islands/Ticker.tsx": `import { useState } from "react";
import { useFeed } from "shell/runtime";

export default function Ticker() {
  const [tick, setTick] = useState("none yet");
  const status = useFeed("/ticker/events", {
    on: { tick: (event) => setTick(String(JSON.parse(event.data).text)) },
  });
  return (
    <section>
      <p id="version">ticker v1</p>
      <output id="tick">{tick}</output>
      <output id="status">{status}</output>
      <input name="note" aria-label="Note" />
    </section>
  );
}
`,
  "routes/ticker/index.tsx": `import Ticker from "../../islands/Ticker.tsx";

export default function TickerPage() {
  return (
    <>
      <title>Ticker</title>
      <Ticker />
    </>
  );
}
`,
  "routes/ticker/links.tsx": `export default function Links() {
  return <a href="/ticker/plain">Plain</a>;
}
`,
  "routes/ticker/plain.tsx": `export default function Plain() {
  return <p id="plain">plain v1</p>;
}
`,
};

/** The deploy: the event's field renamed (`text` to `words`), and the island with it. */
const V2: Record<string, string> = {
  "routes/ticker/events.ts": V1["routes/ticker/events.ts"]
    .replace(`{ text: "tick from v1" }`, `{ words: "tick from v2" }`),
  "islands/Ticker.tsx": V1["islands/Ticker.tsx"]
    .replace(".text)", ".words)").replace("ticker v1", "ticker v2"),
  "routes/ticker/plain.tsx": V1["routes/ticker/plain.tsx"].replace("plain v1", "plain v2"),
};

Deno.test("an old tab's event stream that reconnects to a new build: the page moves to it", async () => {
  await using copy = await copyProject({
    from: await builtCopy("deploy-streams", V1),
    withBuild: true,
  });
  const env = { KV_PATH: join(copy.root, ".data/kv.sqlite3") };
  await using browser = await launchBrowser();
  let server = await startServer(env, { root: copy.root });
  const port = server.port;
  try {
    const page = await (await browser.newContext()).newPage();
    // What the old island was given, in order: it must never show what it cannot read.
    const shown: string[] = [];
    await page.exposeFunction("shown", (text: string) => shown.push(text));
    await page.addInitScript(() => {
      // Set when the page asks when it last reloaded for a new build: it is about to again.
      const get = Storage.prototype.getItem;
      Storage.prototype.getItem = function (key) {
        if (key === "app-stale-reload") Object.assign(globalThis, { reloadAsked: true });
        return get.call(this, key);
      };
      new MutationObserver(() => {
        const tick = document.querySelector("#tick");
        if (tick) (globalThis as unknown as { shown(text: string): void }).shown(tick.textContent!);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
    await page.goto(`${server.origin}/ticker`);
    await page.locator("#tick", { hasText: "tick from v1" }).waitFor();
    await page.getByLabel("Note").fill("typed before");
    await page.evaluate(() => Object.assign(globalThis, { stillHere: true }));
    // Another tab hovers a link before the deploy: the speculation rules prefetch its page.
    const hovering = await (await browser.newContext()).newPage();
    await hovering.goto(`${server.origin}/ticker/links`);
    await Promise.all([
      hovering.waitForRequest((req) => req.url().endsWith("/ticker/plain")),
      hovering.hover('a[href="/ticker/plain"]'),
    ]);

    for (const [path, text] of Object.entries(V2)) await copy.write(path, text);
    const build = await new Deno.Command(Deno.execPath(), {
      args: ["task", "build"],
      cwd: copy.root,
      env: { NODE_ENV: "production" },
    }).output();
    assert.equal(build.code, 0, new TextDecoder().decode(build.stderr));
    await server.stop();
    server = await startServer(env, { root: copy.root, port });

    // The stream comes back on the new build: the page reloads to it, what was typed kept.
    await page.locator("#version", { hasText: "ticker v2" }).waitFor({ timeout: 20_000 });
    await page.locator("#tick", { hasText: "tick from v2" }).waitFor();
    assert.ok(!(await page.evaluate(() => "stillHere" in globalThis)), "reloaded");
    await page.waitForFunction(() =>
      document.querySelector<HTMLInputElement>('input[name="note"]')?.value === "typed before"
    );
    assert.equal(await page.locator("html[data-failure]").count(), 0);
    assert.ok(!shown.includes("undefined"), `the old island showed: ${shown}`);

    // The link followed after the deploy shows what was prefetched before it: the old version's
    // page, an old tab like any other (docs/deploying.md, "follows a link").
    await hovering.click('a[href="/ticker/plain"]');
    await hovering.waitForURL((url) => url.pathname === "/ticker/plain");
    const delivery = await hovering.evaluate(() =>
      (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming & {
        deliveryType: string;
      }).deliveryType
    );
    assert.equal(delivery, "navigational-prefetch");
    assert.equal(await hovering.locator("#plain").textContent(), "plain v1");
    // The next navigation loads the new version.
    await hovering.reload();
    assert.equal(await hovering.locator("#plain").textContent(), "plain v2");

    // Out of date again at once (a rollout still under way: the next stream is answered by yet
    // another build): the page waits out the gap between such reloads, and what is typed while
    // it waits comes back after the reload, not what the fields held when it began to wait.
    let another = true;
    await page.route(/\/ticker\/events/, async (route) => {
      if (!another) return await route.continue();
      another = false;
      await route.fulfill({
        contentType: "text/event-stream",
        body: "retry: 1000\n\nevent: app-build\ndata: yet-another\n\n",
      });
    });
    await page.evaluate(() => Object.assign(globalThis, { stillHere: true }));
    // The stream opens again as the page is shown again.
    await page.evaluate(() => {
      dispatchEvent(new PageTransitionEvent("pagehide"));
      dispatchEvent(new PageTransitionEvent("pageshow"));
    });
    await page.waitForFunction(() => "reloadAsked" in globalThis);
    await page.getByLabel("Note").fill("typed while it waited");
    await page.waitForFunction(() => !("stillHere" in globalThis), null, { timeout: 20_000 });
    await page.waitForFunction(() =>
      document.querySelector<HTMLInputElement>('input[name="note"]')?.value ===
        "typed while it waited"
    );
  } finally {
    await server.stop();
  }
});
