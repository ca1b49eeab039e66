/**
 * Deno's OpenTelemetry and Sentry in Chromium, against an OTLP receiver and a Sentry receiver on
 * 127.0.0.1: the browser's pageload continues the server's span (the page's meta tags come from
 * it), a same-origin fetch from the page lands in the same trace, and a browser error event
 * carries the debug IDs of the chunks in its stack — the ones each served chunk ends with — so
 * Sentry finds their uploaded source maps.
 */
import assert from "node:assert/strict";
import { launchBrowser } from "../helpers/browser.ts";
import { fixtureProject } from "../helpers/fixtures.ts";
import { startOtlpReceiver, tracedEnv } from "../helpers/otlp_receiver.ts";
import { isErrorEvent, isTransaction, type ReceivedItem, startSentryReceiver } from "shell/testing";
import { startServer } from "../helpers/server.ts";

const pageload = (item: ReceivedItem) =>
  isTransaction(item) && item.payload.contexts.trace.op === "pageload";

interface DebugImage {
  type: string;
  code_file: string;
  debug_id: string;
}

Deno.test("telemetry (browser): the pageload continues the server's span; debug IDs", async (t) => {
  // The fixtures' Thrower island fetches /api/time and throws on a click.
  const root = await fixtureProject();
  await using rx = startOtlpReceiver();
  await using sentry = startSentryReceiver();
  await using server = await startServer({
    ...tracedEnv(rx, sentry.dsn),
  }, { root });
  await using browser = await launchBrowser();
  const tab = await browser.newPage();
  await tab.goto(server.origin + "/thrower");

  await t.step("the pageload is a child of the server span of the page", async () => {
    const served = await rx.span((s) => s.kind === 2 && s.name === "GET /thrower");
    const { payload } = await sentry.waitFor(pageload);
    assert.equal(payload.transaction, "/thrower");
    assert.equal(payload.contexts.trace.trace_id, served.traceId);
    assert.equal(payload.contexts.trace.parent_span_id, served.spanId);
  });

  await t.step("a fetch from the page: its server span in the same trace", async () => {
    const { payload } = await sentry.waitFor(pageload);
    await tab.getByRole("button", { name: "Fetch" }).click();
    await tab.waitForFunction(() => document.querySelector("output")?.textContent !== "");
    const api = await rx.span((s) => s.kind === 2 && s.name === "GET /api/time");
    assert.equal(api.traceId, payload.contexts.trace.trace_id);
  });

  await t.step("a browser error carries the debug IDs the served chunks end with", async () => {
    await tab.getByRole("button", { name: "Throw" }).click();
    const { payload } = await sentry.waitFor((i) =>
      isErrorEvent(i) && i.payload.exception.values[0].value === "island click failed"
    );
    const images: DebugImage[] = payload.debug_meta?.images ?? [];
    const urls: string[] = payload.exception.values[0].stacktrace.frames
      .map((frame: { filename: string }) => frame.filename);
    const island = urls.find((url) => /\/_app\/Thrower-/.test(url));
    assert.ok(island, `a frame in the island's chunk: ${urls}`);
    const image = images.find((i) => i.code_file === island);
    assert.ok(image, `a debug image for ${island}: ${JSON.stringify(images)}`);
    assert.equal(image.type, "sourcemap");
    const chunk = await (await fetch(island)).text();
    assert.equal(chunk.match(/\/\/# debugId=([0-9a-f-]{36})\s*$/)?.[1], image.debug_id);
    // Every chunk in the stack has its image: Sentry can resolve each frame.
    for (const url of new Set(urls.filter((url) => url.includes("/_app/")))) {
      assert.ok(images.some((i) => i.code_file === url), `no debug image for ${url}`);
    }
  });
});
