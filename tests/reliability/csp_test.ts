/**
 * Content-Security-Policy: on every page of the framework's test app each script we emit — inline or not, streamed in
 * late or not — carries the request's own nonce, a fresh one per request; and Chromium, loading
 * each page until it is done (islands hydrated, Suspense streamed in), reports no violation. Run
 * with Sentry off, and on (sending to a local receiver) since its browser SDK loads scripts too:
 * there each page with islands is left only once its pageload transaction reached the receiver,
 * proof that the SDK loaded and sent under the CSP.
 */
import assert from "node:assert/strict";
import { examplePages } from "../../bench/pages.ts";
import type { BrowserContext } from "playwright-core";
import { hydrated, launchBrowser, watchRequests } from "../helpers/browser.ts";
import {
  isTransaction,
  type ReceivedItem,
  type SentryReceiver,
  startSentryReceiver,
} from "shell/testing";
import { startServer, type TestServer } from "../helpers/server.ts";

function nonceOf(res: Response): string {
  const csp = res.headers.get("content-security-policy") ?? "";
  const nonce = /script-src [^;]*'nonce-([^']+)'/.exec(csp)?.[1];
  assert.ok(nonce, `no script nonce in the CSP: ${csp}`);
  return nonce;
}

async function assertScriptsCarryNonce(server: TestServer) {
  for (const path of await examplePages(server.origin)) {
    const first = await server.fetch(path);
    const second = await server.fetch(path);
    const [a, b] = [nonceOf(first), nonceOf(second)];
    assert.notEqual(a, b, `${path}: the nonce must be fresh per request`);
    const body = await first.text();
    await second.body?.cancel();
    for (const [tag] of body.matchAll(/<script\b[^>]*>/gi)) {
      assert.ok(tag.includes(`nonce="${a}"`), `${path}: ${tag} lacks the request's nonce`);
    }
  }
}

const pageloadOf = (path: string) => (item: ReceivedItem) =>
  isTransaction(item) && item.payload.contexts.trace.op === "pageload" &&
  item.payload.transaction === path;

async function assertNoViolationInChromium(
  tabs: BrowserContext,
  server: TestServer,
  sentry?: SentryReceiver,
) {
  const page = await tabs.newPage();
  const requests = watchRequests(page);
  const violations: string[] = [];
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  page.on("console", (message) => {
    if (/CSP violation|Content Security Policy/i.test(message.text())) {
      violations.push(`${page.url()}: ${message.text()}`);
    }
  });
  let sentOnIslandPages = 0;
  for (const path of await examplePages(server.origin)) {
    await page.goto(server.origin + path);
    await hydrated(page);
    await requests.quiet();
    if (path === "/streaming") await page.getByText("Streamed in after the shell.").waitFor();
    if (path === "/counter") {
      await page.getByRole("button", { name: "Increment" }).click();
      await page.waitForFunction(() => document.querySelector("output")?.textContent === "4");
    }
    if (sentry && await page.locator("app-island").count() > 0) {
      await sentry.waitFor(pageloadOf(path));
      sentOnIslandPages++;
    }
  }
  if (sentry) assert.ok(sentOnIslandPages > 0, "the SDK sent from a page with islands");
  await page.close();
  assert.deepEqual(violations, []);
}

Deno.test("the CSP in Chromium", async (t) => {
  // One browser for both, and one context (which costs Chromium more than a page does): launching
  // one costs more than loading every page.
  await using browser = await launchBrowser();
  const tabs = await browser.newContext();

  await t.step(
    "every script carries the request's nonce and Chromium sees no CSP violation",
    async () => {
      await using server = await startServer();
      await assertScriptsCarryNonce(server);
      await assertNoViolationInChromium(tabs, server);
    },
  );

  await t.step("with Sentry on, too", async () => {
    await using receiver = startSentryReceiver();
    await using server = await startServer({
      SENTRY_DSN: receiver.dsn,
      SENTRY_TRACES_SAMPLE_RATE: "1.0",
    });
    await assertScriptsCarryNonce(server);
    await assertNoViolationInChromium(tabs, server, receiver);
  });
});
