/**
 * @module
 * The minimal app `deno task example:remove` leaves (`lib/cli/remove_example.ts`), written by
 * `removeExample` into a tree of the test's own and served in-process from its modules: its first
 * page loads in Chromium with a clean console - no request of the page's answers an error, the
 * icon Chromium asks for by itself included. (The whole clean start, built and tested:
 * tests/process/clean_start_test.ts.)
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { EXAMPLE_LIST, MINIMAL_APP, removeExample } from "../../lib/cli/remove_example.ts";
import { createApp } from "../../lib/server.ts";
import { memoryManifest, serveApp } from "../helpers/app.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { within } from "../helpers/wait.ts";

Deno.test("the minimal app's first page loads with a clean console, its icon included", async () => {
  const root = await mkdtemp(join(tmpdir(), "minimal-app-"));
  try {
    // A tree whose example lists nothing: removeExample writes the minimal app there.
    await mkdir(join(root, "tests/example"), { recursive: true });
    await writeFile(join(root, EXAMPLE_LIST), JSON.stringify({ files: [] }));
    await writeFile(join(root, "deno.json"), "{}");
    await removeExample(root);
    const routes = Object.fromEntries(
      await Promise.all(
        Object.keys(MINIMAL_APP).filter((path) => path.startsWith("routes/")).map(
          async (path) => [
            path.slice("routes/".length),
            await import(pathToFileURL(join(root, path)).href),
          ],
        ),
      ),
    );
    await using kv = await Deno.openKv(":memory:");
    const app = createApp(memoryManifest({ routes }), { root, kv });
    // What the browser asked the server, and what it answered.
    const answered: { path: string; status: number }[] = [];
    let icon: (path: string) => void;
    const iconAsked = new Promise<string>((resolve) => icon = resolve);
    await using server = serveApp({
      ...app,
      async fetch(req, info) {
        const res = await app.fetch(req, info);
        const path = new URL(req.url).pathname;
        answered.push({ path, status: res.status });
        if (/^\/favicon\./.test(path)) icon(path);
        return res;
      },
    });
    await using browser = await launchBrowser();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));
    page.on("pageerror", (error) => errors.push(String(error)));

    await page.goto(server.origin + "/");
    assert.equal(await page.locator("h1").textContent(), "Home");
    // Chromium asks for the page's icon by itself after the page: the last request to wait for.
    const asked = await within(iconAsked, 10_000, "Chromium to ask for the page's icon");
    assert.deepEqual(answered.filter(({ status }) => status >= 400), [], `asked for ${asked}`);
    assert.deepEqual(errors, []);
  } finally {
    await rm(root, { recursive: true });
  }
});
