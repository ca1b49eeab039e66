/**
 * @module
 * Static files and built assets, in-process on the framework's test app from its real build: ETags and
 * 304s, immutable caching for hashed `/_app/` files, their compressed copies (decompressed here, so
 * what goes out is checked byte for byte), the preloads an island page needs, and no script at
 * all on a page without one. And, on a folder of the test's own, a listed file that is gone or
 * became a folder after start-up: a 404, never a 200 whose body breaks off.
 */
import { Hono } from "hono";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import type { App } from "../lib/server.ts";
import { staticFiles } from "../lib/server/static.ts";
import { fixtureApp } from "./helpers/app.ts";

const IMMUTABLE = "public, max-age=31536000, immutable";

/** The `/_app/` files a chunk imports statically, transitively, read from the served code. */
async function importsOf(app: App, url: string, seen = new Set<string>()) {
  const code = await (await app.request(url)).text();
  for (const [, file] of code.matchAll(/(?:from|import)\s*"\.\/([\w.-]+\.js)"/g)) {
    const dep = `/_app/${file}`;
    if (seen.has(dep)) continue;
    seen.add(dep);
    await importsOf(app, dep, seen);
  }
  return seen;
}

const attrs = (html: string, tag: RegExp, attr: string) =>
  [...html.matchAll(tag)].map((m) => new RegExp(`${attr}="([^"]*)"`).exec(m[0])?.[1]);

const app = await fixtureApp();
const server = { fetch: (path: string, init?: RequestInit) => app.request(path, init) };

Deno.test("static/ files have an ETag and answer 304 when it matches", async () => {
  for (const [path, type] of [["/favicon.svg", "image/svg+xml"]]) {
    const res = await server.fetch(path);
    const text = await res.text();
    assert.equal(res.status, 200, path);
    assert.ok(text.length > 0);
    assert.ok(res.headers.get("content-type")!.startsWith(type), path);
    assert.equal(res.headers.get("cache-control"), "public, max-age=0, must-revalidate");
    const etag = res.headers.get("etag");
    assert.ok(etag, `${path} has an ETag`);

    const again = await server.fetch(path, { headers: { "If-None-Match": etag } });
    assert.equal(again.status, 304, path);
    assert.equal(await again.text(), "");
    assert.equal(again.headers.get("etag"), etag);

    const stale = await server.fetch(path, { headers: { "If-None-Match": 'W/"other"' } });
    assert.equal(stale.status, 200);
    assert.equal(await stale.text(), text);
  }
});

Deno.test("the island page preloads every chunk it needs and boots as a module", async () => {
  const html = await (await server.fetch("/counter")).text();
  const head = html.slice(0, html.indexOf("</head>"));
  const boot = attrs(head, /<script\b[^>]*>/g, "src");
  assert.equal(boot.length, 1, "one script: the boot module");
  assert.match(boot[0]!, /^\/_app\/boot-[\w]+\.js$/);
  assert.match(head, /<script src="\/_app\/boot-\w+\.js" type="module" async=""/);

  const island = /<app-island name="Counter" src="([^"]+)"/.exec(html)?.[1];
  assert.ok(island, "the island marker names its chunk");
  assert.match(island, /^\/_app\/Counter-\w+\.js$/);

  const preloaded = new Set(attrs(head, /<link rel="modulepreload"[^>]*>/g, "href"));
  const needed = new Set([
    island,
    ...await importsOf(app, boot[0]!),
    ...await importsOf(app, island),
  ]);
  assert.ok(needed.size > 1, "the island shares chunks with the boot runtime");
  for (const url of needed) assert.ok(preloaded.has(url), `${url} is preloaded`);
});

Deno.test("the action client loads at an action's first call, not with the page", async () => {
  const html = await (await server.fetch("/wall")).text();
  const island = /<app-island name="Wall" src="([^"]+)"/.exec(html)![1];
  const chunks = [island, ...await importsOf(app, island)];
  const code =
    (await Promise.all(chunks.map(async (url) => await (await server.fetch(url)).text())))
      .join("\n");
  const client = /\bimport\("(\/_app\/action-client-\w+\.js)"\)/.exec(code)?.[1];
  assert.ok(client, "the island's stubs import the action client when called");
  const onPage = new Set([
    ...attrs(html, /<(?:script|link)\b[^>]*>/g, "(?:src|href)"),
    ...chunks,
  ]);
  assert.ok(!onPage.has(client), "the page does not load the action client");
  const served = await server.fetch(client);
  await served.body?.cancel();
  assert.equal(served.status, 200);
});

Deno.test("hashed assets are immutable, with ETags and source maps", async () => {
  const html = await (await server.fetch("/counter")).text();
  const urls = new Set(html.match(/\/_app\/[\w.-]+\.js/g));
  assert.ok(urls.size >= 2);
  for (const url of urls) {
    const res = await server.fetch(url);
    const code = await res.text();
    assert.equal(res.status, 200, url);
    assert.match(res.headers.get("content-type")!, /javascript/, url);
    assert.equal(res.headers.get("cache-control"), IMMUTABLE, url);
    const etag = res.headers.get("etag")!;
    assert.ok(etag, `${url} has an ETag`);
    const again = await server.fetch(url, { headers: { "If-None-Match": etag } });
    await again.body?.cancel();
    assert.equal(again.status, 304, url);

    const map = /^\/\/# sourceMappingURL=([\w.-]+\.map)$/m.exec(code)?.[1];
    assert.ok(map, `${url} links its source map`);
    const mapRes = await server.fetch(`/_app/${map}`);
    assert.equal(mapRes.status, 200, map);
    assert.equal((await mapRes.json()).version, 3);
  }
});

Deno.test("scripts go out compressed as the browser accepts, the same code", async () => {
  const html = await (await server.fetch("/counter")).text();
  const [boot] = html.match(/\/_app\/boot-\w+\.js/)!;
  const identity = await server.fetch(boot, { headers: { "Accept-Encoding": "identity" } });
  assert.equal(identity.headers.get("content-encoding"), null);
  const code = await identity.text();
  const decompress = { br: brotliDecompressSync, gzip: gunzipSync };
  for (const encoding of ["br", "gzip"] as const) {
    const res = await server.fetch(boot, { headers: { "Accept-Encoding": encoding } });
    assert.equal(res.headers.get("content-encoding"), encoding);
    assert.equal(res.headers.get("vary"), "Accept-Encoding");
    const sent = new Uint8Array(await res.arrayBuffer());
    assert.ok(sent.length < new TextEncoder().encode(code).length, `${encoding}: smaller`);
    assert.equal(new TextDecoder().decode(decompress[encoding](sent)), code);
  }
  const copy = await server.fetch(`${boot}.br`);
  await copy.body?.cancel();
  assert.equal(copy.status, 404, "the compressed copies have no URL of their own");
});

Deno.test("a page without islands ships no script of ours", async () => {
  for (const path of ["/", "/about", "/blog/first-post", "/streaming", "/no-such-page"]) {
    const html = await (await server.fetch(path)).text();
    assert.ok(!/<script\b[^>]*\bsrc=/.test(html), `${path} loads no script file`);
    assert.ok(!html.includes("modulepreload"), `${path} preloads no module`);
    // Its stylesheets are built assets too; no script is.
    assert.ok(!/\/_app\/[^"]*\.js\b/.test(html), `${path} names no built script`);
  }
});

Deno.test("a listed file gone or turned into a folder after start-up answers 404", async () => {
  const dir = await mkdtemp(join(tmpdir(), "static-"));
  try {
    for (const name of ["gone.txt", "folder.txt", "kept.txt"]) {
      await writeFile(join(dir, name), "text\n");
    }
    const files = staticFiles({ dir, prefix: "", immutable: false });
    const app = new Hono();
    app.use((c, next) => files(c)?.(c, next) ?? next());
    app.get("*", (c) => c.text("not found", 404));

    await rm(join(dir, "gone.txt"));
    await rm(join(dir, "folder.txt"));
    await mkdir(join(dir, "folder.txt"));

    const kept = await app.request("/kept.txt");
    assert.equal(kept.status, 200);
    assert.equal(await kept.text(), "text\n");
    for (const path of ["/gone.txt", "/folder.txt"]) {
      const res = await app.request(path);
      assert.equal(res.status, 404, path);
      assert.equal(await res.text(), "not found", path);
    }
  } finally {
    await rm(dir, { recursive: true });
  }
});

Deno.test('a folder named relative to the working directory serves its files (root: ".")', async () => {
  // `createApp(manifest, { root: "." })`, as the docs' tests write it: every script and stylesheet
  // answered 404 while the page itself rendered.
  const dir = await mkdtemp(join(Deno.cwd(), ".static-relative-"));
  try {
    await writeFile(join(dir, "app.js"), "export {};\n");
    const files = staticFiles({ dir: relative(Deno.cwd(), dir), prefix: "/_app", immutable: true });
    const app = new Hono();
    app.use((c, next) => files(c)?.(c, next) ?? next());
    app.get("*", (c) => c.text("not found", 404));
    const res = await app.request("/_app/app.js");
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "export {};\n");
  } finally {
    await rm(dir, { recursive: true });
  }
});
