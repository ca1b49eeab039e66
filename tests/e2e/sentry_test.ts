/**
 * Sentry in Chromium, against a receiver on 127.0.0.1 that reads what the real `@sentry/react`
 * sends: the pageload continues the server's trace, the SDK loads only after the islands hydrated,
 * errors (also one from before the SDK loaded) are sent, same-origin fetches carry the trace to the
 * server, and the not-found page sends nothing.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { launchBrowser } from "../helpers/browser.ts";
import { copyProject } from "../helpers/project_copy.ts";
import {
  isErrorEvent,
  isTransaction,
  type ReceivedItem,
  startSentryReceiver,
} from "../helpers/sentry_receiver.ts";
import { startServer } from "../helpers/server.ts";

const THROWER = `import { useState } from "react";

export default function Thrower() {
  const [now, setNow] = useState("");
  const load = async () => setNow((await (await fetch("/api/time")).json()).now);
  return (
    <p>
      <button type="button" onClick={load}>Fetch</button>
      <button type="button" onClick={() => { throw new Error("island click failed"); }}>Throw</button>
      <output>{now}</output>
    </p>
  );
}
`;

const BROKEN = `export default function Broken() {
  if (typeof document !== "undefined") throw new Error("broken island");
  return <p>fine on the server</p>;
}
`;

const page = (island: string) =>
  `import ${island} from "../islands/${island}.tsx";
export default function Page() {
  return <${island} />;
}
`;

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

Deno.test("sentry (browser): one trace from the server through the page and back", async (t) => {
  await using project = await copyProject();
  await project.write("islands/Thrower.tsx", THROWER);
  await project.write("islands/Broken.tsx", BROKEN);
  await project.write("routes/thrower.tsx", page("Thrower"));
  await project.write("routes/broken.tsx", page("Broken"));

  await using receiver = startSentryReceiver();
  await using server = await startServer(
    { SENTRY_DSN: receiver.dsn, SENTRY_TRACES_SAMPLE_RATE: "1" },
    { root: project.root },
  );
  await using browser = await launchBrowser();
  const tab = await browser.newPage();
  const consoleErrors: string[] = [];
  tab.on("console", (msg) => msg.type() === "error" && consoleErrors.push(msg.text()));

  await t.step("the not-found page sends nothing", async () => {
    const res = await tab.goto(server.origin + "/no/such/page");
    assert.equal(res?.status(), 404);
    await tab.waitForLoadState("load");
    await tab.waitForTimeout(1_500); // the SDK, were it there, would have loaded by now
    const scripts = await tab.locator("script").count();
    assert.equal(scripts, 0);
    assert.deepEqual(receiver.items.map((i) => i.type), []);
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
    await tab.waitForTimeout(500); // a second copy, were there one, would have come by now
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
  const expected = /island click failed|broken island|404 \(Not Found\)/;
  const unexpected = consoleErrors.filter((text) => !expected.test(text));
  assert.deepEqual(unexpected, []);
});

Deno.test("sentry (browser): a page without islands, through the tunnel", async () => {
  await using receiver = startSentryReceiver();
  await using server = await startServer({
    SENTRY_DSN: receiver.dsn,
    SENTRY_TRACES_SAMPLE_RATE: "1",
    SENTRY_TUNNEL: "1",
  });
  await using browser = await launchBrowser();
  const tab = await browser.newPage();
  const posts: string[] = [];
  tab.on("request", (req) => req.method() === "POST" && posts.push(new URL(req.url()).pathname));

  await tab.goto(server.origin + "/about");
  const served = await receiver.waitFor(transaction("GET /about", "http.server"));
  const pageload = await receiver.waitFor(transaction("/about", "pageload"));
  assert.equal(traceOf(pageload), traceOf(served));
  // The page's CSP admits only our own origin: the envelope can only have come through the tunnel.
  assert.deepEqual([...new Set(posts)], ["/_sentry"]);
});
