/**
 * @module
 * Navigation in Chromium, on an app of this test's own (in memory, served on loopback): the
 * speculation rules every page carries make the browser prefetch a link's page as the pointer
 * rests on it — the server sees `Sec-Purpose: prefetch` — and the click then uses it; links marked
 * `data-no-prefetch`, the framework's `/_…` paths and sign-out links are never asked for ahead;
 * `data-prerender` and a route's `prerender` export prerender instead.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { Middleware, PageProps } from "../../lib/mod.ts";
import { launchBrowser, pageErrors } from "../helpers/browser.ts";
import { memoryApp, serveApp } from "../helpers/app.ts";
import { within } from "../helpers/wait.ts";

interface Seen {
  path: string;
  purpose: string | null;
}

function linksApp() {
  const seen: Seen[] = [];
  const arrived = new EventTarget();
  const record: Middleware = async (c, next) => {
    seen.push({ path: c.req.path, purpose: c.req.header("Sec-Purpose") ?? null });
    arrived.dispatchEvent(new Event("request"));
    await next();
  };
  const target = ({ url }: PageProps) => (
    <>
      <title>{url.pathname}</title>
      <h1>{url.pathname}</h1>
    </>
  );
  const app = memoryApp({
    routes: {
      "_middleware.ts": { handler: record },
      "index.tsx": {
        default: () => (
          <main>
            <h1>Links</h1>
            <p>
              <a href="/plain">plain</a>
            </p>
            <p>
              <a href="/marked" data-no-prefetch>marked</a>
            </p>
            <nav data-no-prefetch>
              <a href="/inside">inside a marked element</a>
            </nav>
            <p>
              <a href="/_internal">internal</a>
            </p>
            <p>
              <a href="/account/logout">sign out</a>
            </p>
            <p>
              <a href="/prerendered" data-prerender>prerendered link</a>
            </p>
            <p>
              <a href="/blog/first">prerendered route</a>
            </p>
          </main>
        ),
      },
      "plain.tsx": { default: target },
      "marked.tsx": { default: target },
      "inside.tsx": { default: target },
      "account/logout.tsx": { default: target },
      "prerendered.tsx": { default: target },
      "blog/[slug].tsx": { default: target, prerender: true },
    },
  });
  /** Resolves with the first request for `path` (already seen, or once it comes). */
  const request = (path: string, ms = 10_000) => {
    const find = () => seen.find((s) => s.path === path);
    return within(
      new Promise<Seen>((resolve) => {
        const check = () => {
          const found = find();
          if (!found) return;
          arrived.removeEventListener("request", check);
          resolve(found);
        };
        arrived.addEventListener("request", check);
        check();
      }),
      ms,
      `a request for ${path}`,
    );
  };
  return { app, seen, request };
}

/** Presses the pointer on a link and lets go elsewhere: the speculation's trigger, no click. */
async function pressWithoutClick(page: Page, selector: string): Promise<void> {
  const box = (await page.locator(selector).boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(0, 0);
  await page.mouse.up();
}

Deno.test("speculation rules in Chromium", async (t) => {
  await using browser = await launchBrowser();
  const { app, seen, request } = linksApp();
  await using server = serveApp(app);
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = pageErrors(page);
  const csp: string[] = [];
  page.on(
    "console",
    (msg) => msg.text().includes("Content Security Policy") && csp.push(msg.text()),
  );
  await page.goto(`${server.origin}/`);

  await t.step("the page carries the rules with the request's nonce", async () => {
    const script = page.locator('script[type="speculationrules"]');
    assert.equal(await script.count(), 1);
    const rules = JSON.parse((await script.textContent())!);
    assert.equal(rules.prefetch[0].eagerness, "moderate");
    assert.ok(await script.evaluate((el) => (el as HTMLScriptElement).nonce.length > 0));
    assert.deepEqual(csp, []);
  });

  await t.step("never: marked links, links in a marked element, /_ paths, sign-out", async () => {
    for (const href of ["/marked", "/inside", "/_internal", "/account/logout"]) {
      await pressWithoutClick(page, `a[href="${href}"]`);
    }
    // Pressed last: once its prefetch arrives, the browser has dealt with those before it.
    await pressWithoutClick(page, 'a[href="/plain"]');
    await request("/plain");
    const ahead = seen.filter((s) => s.purpose !== null).map((s) => s.path);
    assert.deepEqual(ahead, ["/plain"]);
  });

  await t.step("hovering a link prefetches it: Sec-Purpose: prefetch", async () => {
    const { app: fresh, seen: freshSeen, request: freshRequest } = linksApp();
    await using other = serveApp(fresh);
    await page.goto(`${other.origin}/`);
    await page.hover('a[href="/plain"]');
    const prefetch = await freshRequest("/plain");
    assert.equal(prefetch.purpose, "prefetch");
    await page.click('a[href="/plain"]');
    await page.waitForURL(`${other.origin}/plain`);
    assert.equal(await page.locator("h1").textContent(), "/plain");
    // The click used what was prefetched: the server was asked for the page once.
    assert.deepEqual(freshSeen.filter((s) => s.path === "/plain").length, 1);
    const delivery = await page.evaluate(() =>
      (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming & {
        deliveryType: string;
      }).deliveryType
    );
    assert.equal(delivery, "navigational-prefetch");
  });

  await t.step("data-prerender, and a route that exports prerender, are prerendered", async () => {
    await page.goto(`${server.origin}/`);
    await page.hover('a[href="/prerendered"]');
    assert.equal((await request("/prerendered")).purpose, "prefetch;prerender");
    await page.hover('a[href="/blog/first"]');
    assert.equal((await request("/blog/first")).purpose, "prefetch;prerender");
  });

  assert.deepEqual(errors, []);
  await context.close();
});
