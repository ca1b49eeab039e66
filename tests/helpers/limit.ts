/**
 * @module
 * The bench's limit (`bench/bare.ts`) against the framework, page by page: both started in one
 * built tree, each SSR page the bench loads (`bench/pages.ts`) asked of both, and the documents
 * compared byte for byte once the framework's nonce (from its CSP) is read as the limit's fixed one
 * and each server's own `host:port` (a page may show its URL: the island's `home` prop does) as
 * one placeholder. Those are what a page may differ by, per request by design; anything else is the
 * limit rendering a page other than the one it is the limit of.
 */
import assert from "node:assert/strict";
import { SSR_PAGES } from "../../bench/pages.ts";
import { startServer } from "./server.ts";

/** The nonce `bench/bare.ts` writes on every page. */
const LIMIT_NONCE = "bench";
/** What each server's `host:port` reads as (fetch sends the `Host` of the URL, whatever it is told). */
const HOST = "pages.test";

/** A page's document as the framework sends it, and as the limit does. */
export interface PagePair {
  path: string;
  framework: string;
  limit: string;
}

/** Serves `root` (built, with `bench/`) both ways and asks each for every SSR page. */
export async function pagesOfBoth(root: string): Promise<PagePair[]> {
  await using framework = await startServer({}, { root });
  await using limit = await startServer({}, { root, script: "bench/bare.ts" });
  const pairs: PagePair[] = [];
  for (const path of Object.keys(SSR_PAGES)) {
    const [ours, bare] = await Promise.all([framework.fetch(path), limit.fetch(path)]);
    assert.equal(ours.status, 200, `${path}: the framework's status`);
    assert.equal(bare.status, 200, `${path}: the limit's status`);
    const csp = ours.headers.get("Content-Security-Policy") ?? "";
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce, `${path}: the framework's CSP names a nonce`);
    const html = await ours.text();
    assert.ok(html.includes(`nonce="${nonce}"`), `${path}: the page carries the CSP's nonce`);
    pairs.push({
      path,
      framework: html.replaceAll(nonce, LIMIT_NONCE).replaceAll(hostOf(framework.origin), HOST),
      limit: (await bare.text()).replaceAll(hostOf(limit.origin), HOST),
    });
  }
  return pairs;
}

const hostOf = (origin: string) => new URL(origin).host;
