/**
 * @module
 * A page without islands loads no JavaScript at all; the island page, for contrast, does.
 */
import assert from "node:assert/strict";
import { launchBrowser } from "../helpers/browser.ts";
import { startServer } from "../helpers/server.ts";

Deno.test("island-free pages load no script", async () => {
  await using server = await startServer();
  await using browser = await launchBrowser();

  const scriptsLoadedBy = async (path: string) => {
    const page = await browser.newPage();
    const scripts: string[] = [];
    page.on("request", (req) => req.resourceType() === "script" && scripts.push(req.url()));
    await page.goto(server.origin + path, { waitUntil: "load" });
    const inline = await page.evaluate(() => document.scripts.length);
    await page.close();
    return { scripts, inline };
  };

  for (const path of ["/", "/about", "/blog/hello-world"]) {
    assert.deepEqual(await scriptsLoadedBy(path), { scripts: [], inline: 0 }, path);
  }
  const counter = await scriptsLoadedBy("/counter");
  assert.ok(counter.scripts.length > 0, "the island page does load its scripts");
});
