/**
 * @module
 * Island props in the browser. Hostile props cannot break out of the HTML: an `<Island>` rendered
 * by the real server renderer with them is parsed by Chromium, which must find exactly one island
 * whose `props` attribute decodes to the original values, and run none of the injected scripts.
 * And props arrive with their types: the fixtures' `Props` island inspects its props after
 * hydration (in an effect, which only runs in the browser) and shows what it found; hostile
 * strings arrive intact too, under the real CSP.
 */
import assert from "node:assert/strict";
import { createElement } from "react";
import { Island } from "../../lib/islands/island.ts";
import type { IslandInfo } from "../../lib/islands/registry.ts";
import { deserializeProps, serializeProps } from "../../lib/shared/props.ts";
import { renderPage } from "../../lib/render/page.tsx";
import { deadlineClock } from "../../lib/server/deadline.ts";
import { launchBrowser, pageErrors } from "../helpers/browser.ts";
import { fixtureProject, PROP_STRINGS } from "../helpers/fixtures.ts";
import { startServer } from "../helpers/server.ts";

const HOSTILE = [
  "</script><script>window.__pwned = 'script'</script>",
  "<script>alert(1)</script>",
  "<!--",
  "<!-- <script>",
  "-->",
  `"><img src=x onerror="window.__pwned='attr'">`,
  `'><img src=x onerror='window.__pwned="attr1"'>`,
  "&amp; &lt; &#60; &",
  "\u2028\u2029",
  "</app-island><script>window.__pwned = 'close'</script>",
  "]]><![CDATA[",
  "\\u003c/script>",
];

const props = {
  strings: HOSTILE,
  keyed: new Map(HOSTILE.map((s, i) => [s, i])),
  set: new Set(HOSTILE),
  nested: { [HOSTILE[0]]: { deeper: HOSTILE[5] } },
  when: new Date("2026-01-01T00:00:00Z"),
  home: new URL("https://example.test/?q=</script>"),
};

/** The island shows one hostile string as text, which React must escape as well. */
const island: IslandInfo = {
  name: "Probe",
  component: ({ strings }) => createElement("p", { id: "text" }, (strings as string[]).join("|")),
};

async function renderHtml(): Promise<string> {
  const res = await renderPage({
    layouts: [],
    page: () => createElement(Island, { island, props }),
  }, {
    context: {
      nonce: "test-nonce",
      assets: {
        boot: { entry: "/_app/boot.js", imports: [] },
        islands: { Probe: { entry: "/_app/Probe.js", imports: [] } },
      },
    },
    props: { data: undefined, params: {}, url: new URL("http://localhost/"), state: {} },
    status: 200,
    signal: new AbortController().signal,
    clock: deadlineClock(0),
  });
  return await res.text();
}

Deno.test("island props in the browser", async (t) => {
  // One browser for the file: launching one costs more than either step; and one context, which
  // costs Chromium more than a page does.
  await using browser = await launchBrowser();
  const tabs = await browser.newContext();

  await t.step("hostile island props stay inside their attribute", async () => {
    const html = await renderHtml();
    assert.ok(!html.includes("<script>alert(1)"), "the payload appears escaped in the HTML");
    assert.ok(!html.includes("<img"));

    const page = await tabs.newPage();
    // On about:blank the root-relative boot and chunk URLs do not resolve: no island code runs.
    await page.setContent(html);

    const seen = await page.evaluate(() => ({
      pwned: (window as unknown as { __pwned?: string }).__pwned,
      islands: [...document.querySelectorAll("app-island")].map((el) => ({
        name: el.getAttribute("name"),
        props: el.getAttribute("props"),
      })),
      scripts: [...document.scripts].map((s) => s.outerHTML),
      images: document.images.length,
      text: document.getElementById("text")?.textContent,
    }));

    assert.equal(seen.pwned, undefined, "no injected script ran");
    assert.equal(seen.images, 0);
    assert.equal(seen.islands.length, 1);
    assert.equal(seen.islands[0].name, "Probe");
    assert.equal(seen.islands[0].props, serializeProps("Probe", props));
    assert.deepEqual(deserializeProps(seen.islands[0].props!), props);
    assert.equal(seen.text, HOSTILE.join("|"));
    // The only script is the framework's own boot module, with the nonce.
    assert.equal(seen.scripts.length, 1);
    assert.match(seen.scripts[0], /^<script src="\/_app\/boot\.js" type="module" async="" nonce=/);
  });

  await t.step("island props arrive typed in the browser", async () => {
    await using server = await startServer({}, { root: await fixtureProject() });
    const page = await tabs.newPage();
    const errors = pageErrors(page);

    await page.goto(server.origin + "/props");
    await page.waitForFunction(() => document.getElementById("report")?.textContent !== "");
    const report = JSON.parse((await page.locator("#report").textContent())!);

    assert.deepEqual(report, {
      since: "2026-01-01T00:00:00.000Z",
      tags: ["react", "deno"],
      scores: [["ada", "bigint", "100000000000000000000"]],
      big: "18446744073709551616",
      home: "/home",
      missing: true,
      cycle: true,
      strings: PROP_STRINGS,
    });
    assert.equal(await page.evaluate(() => "__pwned" in window), false);
    assert.deepEqual(errors, []);
  });
});
