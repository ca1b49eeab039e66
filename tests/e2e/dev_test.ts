import assert from "node:assert/strict";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { launchBrowser } from "../helpers/browser.ts";
import { copyProject } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";

/** How long a save may take to show in the browser: rebuild, restart, reconnect, reload. */
const RELOAD_MS = 20_000;

Deno.test("deno task dev reloads the open page after each save, and recovers from errors", async (t) => {
  await using copy = await copyProject();
  await using server = await startServer({ NODE_ENV: "development" }, {
    root: copy.root,
    script: "lib/cli/dev.ts",
  });
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(server.origin + "/counter");
  const heading = page.locator("h1");

  /** Replaces `from` with `to` in a file of the copy and waits until the page reloaded itself. */
  const editAndWaitForReload = async (path: string, from: string, to: string) => {
    const file = join(copy.root, path);
    const text = await Deno.readTextFile(file);
    assert.ok(text.includes(from), `${path} contains ${from}`);
    const reloaded = page.waitForEvent("load", { timeout: RELOAD_MS });
    await Deno.writeTextFile(file, text.replace(from, to));
    await reloaded;
  };

  await t.step("dev pages carry the reload script, with the request's CSP nonce", async () => {
    const res = await server.fetch("/");
    const csp = res.headers.get("Content-Security-Policy")!;
    const html = await res.text();
    const nonce = html.match(/<script nonce="([^"]+)">new EventSource\("\/_dev\/reload"\)/)?.[1];
    assert.ok(nonce, html);
    assert.ok(csp.includes(`'nonce-${nonce}'`), csp);
  });

  await t.step("a route edit shows without touching the browser", async () => {
    await editAndWaitForReload("routes/counter.tsx", "<h1>An island</h1>", "<h1>Edited</h1>");
    assert.equal(await heading.textContent(), "Edited");
  });

  await t.step("an island edit brings its new behaviour", async () => {
    await editAndWaitForReload(
      "islands/Counter.tsx",
      "setCount((n) => n + 1)",
      "setCount((n) => n + 10)",
    );
    assert.equal(await incrementOnceHydrated(page), "13");
  });

  await t.step("a syntax error in a route shows the error, its fix the page", async () => {
    await editAndWaitForReload("routes/counter.tsx", "<h1>Edited</h1>", "<h1>Broken</h1");
    assert.equal(await heading.textContent(), "The server exited with code 1");
    assert.match(await page.locator("pre").textContent() ?? "", /routes\/counter\.tsx/);
    await editAndWaitForReload("routes/counter.tsx", "<h1>Broken</h1", "<h1>Fixed</h1>");
    assert.equal(await heading.textContent(), "Fixed");
  });

  await t.step("a page that throws shows the failure screen, its fix the page", async () => {
    await editAndWaitForReload(
      "routes/counter.tsx",
      "export default function CounterPage({ url }: PageProps) {",
      'export default function CounterPage({ url }: PageProps) {\n  throw new Error("boom");',
    );
    assert.match(await page.locator("h1").textContent() ?? "", /server-side exception/);
    assert.match(await page.content(), /boom/);
    await editAndWaitForReload("routes/counter.tsx", '  throw new Error("boom");\n', "");
    assert.equal(await heading.textContent(), "Fixed");
  });

  await t.step("a syntax error in an island fails the build; its fix recovers", async () => {
    await editAndWaitForReload("islands/Counter.tsx", "useState(start);", "useState(start;");
    assert.equal(await heading.textContent(), "Build failed");
    assert.match(await page.locator("pre").textContent() ?? "", /islands\/Counter\.tsx/);
    await editAndWaitForReload("islands/Counter.tsx", "useState(start;", "useState(start);");
    assert.equal(await heading.textContent(), "Fixed");
    assert.equal(await incrementOnceHydrated(page), "13");
  });
});

Deno.test("production pages have no dev script and no dev endpoint", async () => {
  await using server = await startServer();
  for (const path of ["/", "/counter", "/no-such-page"]) {
    const html = await (await server.fetch(path)).text();
    assert.ok(!html.includes("/_dev/"), `${path}: ${html}`);
    assert.ok(!html.includes("EventSource"), `${path}: ${html}`);
  }
  const res = await server.fetch("/_dev/reload");
  assert.equal(res.status, 404);
  await res.body?.cancel();
});

/**
 * Clicks Increment until the island answers (a click before hydration does nothing) and returns
 * what it shows after the first click that counted.
 */
async function incrementOnceHydrated(page: Page): Promise<string | null> {
  const output = page.locator("output");
  const before = await output.textContent();
  for (let attempt = 0; attempt < 40; attempt++) {
    await page.getByRole("button", { name: "Increment" }).click();
    const changed = await page.waitForFunction(
      (text) => document.querySelector("output")?.textContent !== text,
      before,
      { timeout: 250 },
    ).then(() => true, () => false);
    if (changed) break;
  }
  return await output.textContent();
}
