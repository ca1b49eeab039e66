/**
 * @module
 * The shared page cache in-process (lib/cache/): a route's `cache` renders once and answers from
 * memory and Deno KV; what is never stored; the key against poisoning (`Host`, `X-Forwarded-*`,
 * odd, huge and many queries); the render's CSP nonce and the codings held once; ETag and 304;
 * `Cache-Control`;
 * stale-while-revalidate rendering once in the background; `revalidateTag`. Across processes:
 * tests/process/page_cache_test.ts.
 */
import assert from "node:assert/strict";
import { Suspense, use } from "react";
import { type Context, httpError, revalidateTag, type RouteContext } from "../lib/mod.ts";
import type { AppFiles, TestOptions } from "./helpers/app.ts";
import { memoryApp } from "./helpers/app.ts";
import { defineJobs } from "../lib/data.ts";
import { runJob } from "../lib/testing.ts";
import { memoryLayer } from "../lib/cache/memory.ts";
import { held } from "../lib/cache/entry.ts";
import { matchesIfNoneMatch } from "../lib/cache/etag.ts";
import { resolvePolicy } from "../lib/cache/policy.ts";
import { MAX_TRACKED, tagVersions } from "../lib/cache/tags.ts";
import { tempStore } from "./helpers/kv.ts";
import { heapAfterGc, heapGrowth } from "./helpers/heap.ts";

const ORIGIN = "https://app.example";

function Widget({ n }: { n: number }) {
  return <b>widget {n}</b>;
}

/** An app on a KV store of its own, its origin configured, answering two hosts. */
async function cachedApp(
  routes: AppFiles["routes"],
  options: TestOptions = {},
  jobs?: AppFiles["jobs"],
) {
  const kv = await Deno.openKv(":memory:");
  const app = memoryApp({ routes, islands: { Widget }, jobs }, {
    kv,
    origins: [ORIGIN],
    allowedHosts: ["app.example", "other.example"],
    ...options,
  });
  const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    app.request(ORIGIN + path, { headers, method });
  return {
    app,
    kv,
    get,
    /** X-Cache and body of a GET. */
    async load(path: string, headers: Record<string, string> = {}) {
      const res = await get(path, headers);
      const html = (await res.text()).replaceAll("<!-- -->", "");
      return { state: res.headers.get("x-cache"), html, res };
    },
    async [Symbol.asyncDispose]() {
      await app.close();
      kv.close();
    },
  };
}

/** A page that counts its renders and shows its URL. */
function counted(cache: unknown = { maxAge: 60 }) {
  const count = { renders: 0 };
  const module = {
    cache,
    default: ({ url }: { url: URL }) => {
      count.renders++;
      return <p>render {count.renders} of {url.href}</p>;
    },
  };
  return { count, module };
}

async function pageKeys(kv: Deno.Kv): Promise<number> {
  let n = 0;
  for await (const entry of kv.list({ prefix: ["page_cache"] })) if (entry.key[2] === "page") n++;
  return n;
}

Deno.test("a cached page renders once, then answers from the cache with a weak ETag", async () => {
  const { count, module } = counted({ maxAge: 60, staleWhileRevalidate: 30 });
  await using t = await cachedApp({ "index.tsx": module });
  const first = await t.load("/");
  assert.equal(first.state, "MISS");
  assert.equal(first.res.headers.get("etag"), null, "a streamed first render has no ETag");
  // The render's own answer is its requester's (its forms' submission keys): no CDN keeps it.
  assert.equal(first.res.headers.get("cache-control"), "private, no-cache");
  const second = await t.load("/");
  assert.equal(second.state, "HIT");
  assert.equal(
    second.res.headers.get("cache-control"),
    "public, max-age=0, s-maxage=60, stale-while-revalidate=30",
  );
  // The same bytes, the render's nonce and all (the next test).
  assert.equal(second.html, first.html);
  assert.match(second.res.headers.get("etag")!, /^W\/"[\w-]{22}"$/);
  // Whole seconds since it was stored: a loaded machine may cross one between the two loads.
  assert.match(second.res.headers.get("age")!, /^[01]$/);
  assert.equal(second.res.headers.get("vary"), "Cookie, Accept-Encoding");
  // Each header once: the render's security headers are not kept, the answer's own go out.
  for (const name of ["cross-origin-opener-policy", "referrer-policy", "x-content-type-options"]) {
    assert.equal(second.res.headers.get(name), first.res.headers.get(name), name);
  }
  assert.doesNotMatch(second.res.headers.get("x-request-id")!, /,/);
  assert.equal(count.renders, 1);
});

/** The CSP nonce a response names, and the nonces its body's scripts carry. */
function noncesOf(res: Response, html: string) {
  const csp = /'nonce-([^']+)'/.exec(res.headers.get("content-security-policy")!)![1];
  return { csp, body: new Set([...html.matchAll(/nonce="([^"]+)"/g)].map((m) => m[1])) };
}

Deno.test("a cached page answers with its render's nonce, named by its CSP; others get their own", async () => {
  await using t = await cachedApp({
    "index.tsx": { cache: { maxAge: 60 }, default: () => <Widget n={1} /> },
    "fresh.tsx": { default: () => <Widget n={2} /> },
  });
  const nonces = [];
  for (let i = 0; i < 3; i++) {
    const { html, res } = await t.load("/");
    const { csp, body } = noncesOf(res, html);
    assert.ok(body.size > 0, html);
    assert.deepEqual(body, new Set([csp]), `response ${i}: body and CSP agree`);
    nonces.push(csp);
  }
  assert.equal(new Set(nonces).size, 1, "the render's, made once (lib/cache/entry.ts)");
  assert.match(nonces[0], /^[A-Za-z0-9+/]{22}==$/, "128 random bits");
  // A page the cache passes by (credentials) and one without `cache`: fresh.
  const bypass = await t.load("/", { Authorization: "Bearer x" });
  assert.equal(bypass.state, "BYPASS");
  const fresh = [await t.load("/fresh"), await t.load("/fresh"), bypass];
  const own = fresh.map(({ res, html }) => noncesOf(res, html));
  for (const { csp, body } of own) assert.deepEqual(body, new Set([csp]));
  assert.equal(new Set([nonces[0], ...own.map(({ csp }) => csp)]).size, 4, "each its own");
});

/** A cached page large enough to compress (over 1 KiB), whose renders are counted. */
function largePage() {
  const count = { renders: 0 };
  const module = {
    cache: { maxAge: 60 },
    default: () => (
      <>
        <Widget n={++count.renders} />
        <ul>{Array.from({ length: 100 }, (_, i) => <li key={i}>item {i}</li>)}</ul>
      </>
    ),
  };
  return { count, module };
}

async function decompressed(res: Response): Promise<string> {
  const coding = res.headers.get("content-encoding");
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (!coding) return new TextDecoder().decode(bytes);
  const format = coding === "br" ? "brotli" : "gzip";
  const stream = new Blob([bytes]).stream().pipeThrough(
    new DecompressionStream(format as CompressionFormat),
  );
  return await new Response(stream).text();
}

Deno.test("a compressed hit is the page compressed once: the same bytes, each coding, no render", async () => {
  const { count, module } = largePage();
  await using t = await cachedApp({ "index.tsx": module });
  const miss = await t.get("/", { "Accept-Encoding": "gzip" });
  assert.equal(miss.headers.get("x-cache"), "MISS");
  const page = await decompressed(miss);
  for (const coding of ["gzip", "br"]) {
    const hits = [];
    for (let i = 0; i < 2; i++) {
      const res = await t.get("/", { "Accept-Encoding": coding });
      assert.equal(res.headers.get("x-cache"), "HIT");
      assert.equal(res.headers.get("content-encoding"), coding);
      assert.equal(res.headers.get("vary"), "Cookie, Accept-Encoding");
      assert.match(res.headers.get("etag")!, /^W\//, "one weak tag for every coding");
      const csp = /'nonce-([^']+)'/.exec(res.headers.get("content-security-policy")!)![1];
      const bytes = new Uint8Array(await res.clone().arrayBuffer());
      const html = await decompressed(res);
      assert.equal(html, page, "the page as rendered, the render's nonce in it");
      assert.ok(html.includes(`nonce="${csp}"`), "and named by the CSP");
      hits.push(bytes);
    }
    assert.deepEqual(hits[0], hits[1], `${coding}: the bytes held, not compressed again`);
  }
  const plain = await t.get("/");
  assert.equal(plain.headers.get("content-encoding"), null);
  assert.equal(await plain.text(), page);
  const refused = await t.get("/", { "Accept-Encoding": "gzip;q=0, br;q=0" });
  assert.equal(refused.headers.get("content-encoding"), null);
  await refused.body?.cancel();
  const head = await t.get("/", { "Accept-Encoding": "gzip" }, "HEAD");
  assert.equal(head.headers.get("content-encoding"), null, "HEAD: the headers of no body");
  assert.equal(head.headers.get("x-cache"), "HIT");
  assert.equal(count.renders, 1);
});

Deno.test("compress: false (a proxy compresses): hits are not compressed either", async () => {
  const { module } = largePage();
  await using t = await cachedApp({ "index.tsx": module }, { compress: false });
  await (await t.get("/")).text();
  const hit = await t.get("/", { "Accept-Encoding": "gzip, br" });
  assert.equal(hit.headers.get("x-cache"), "HIT");
  assert.equal(hit.headers.get("content-encoding"), null);
  assert.equal(hit.headers.get("vary"), "Cookie");
  assert.match(await hit.text(), /item (<!-- -->)?99/);
});

Deno.test("If-None-Match: 304 on a match (weak comparison, lists, *), 200 otherwise", async () => {
  const { module } = counted();
  await using t = await cachedApp({ "index.tsx": module });
  await (await t.get("/")).text();
  const etag = (await t.get("/")).headers.get("etag")!;
  const opaque = etag.slice(2);
  for (const header of [etag, opaque, `"nope", ${etag}`, `W/"a",${opaque}`, "*"]) {
    const res = await t.get("/", { "If-None-Match": header });
    assert.equal(res.status, 304, header);
    assert.equal(await res.text(), "");
    assert.equal(res.headers.get("etag"), etag);
    assert.ok(res.headers.get("cache-control"));
    assert.equal(res.headers.get("content-security-policy"), null, "the kept page's CSP stays");
  }
  for (const header of ['"nope"', 'W/"nope"', "", etag.slice(0, -2) + '"']) {
    const res = await t.get("/", { "If-None-Match": header });
    assert.equal(res.status, 200, header);
    await res.body?.cancel();
  }
  assert.equal(matchesIfNoneMatch(null, etag), false);
  const head = await t.get("/", {}, "HEAD");
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("etag"), etag);
  assert.equal(await head.text(), "");
});

Deno.test("Cache-Control: pages without `cache` are private, no-cache; a handler's own stands", async () => {
  await using t = await cachedApp({
    "plain.tsx": { default: () => <p>plain</p> },
    "own.tsx": {
      handler: {
        GET: (_req, ctx) => ctx.render(undefined, { headers: { "Cache-Control": "no-store" } }),
      },
      default: () => <p>own</p>,
    },
    "api/json.ts": { handler: { GET: () => Response.json({ ok: true }) } },
  });
  assert.equal((await t.load("/plain")).res.headers.get("cache-control"), "private, no-cache");
  assert.equal((await t.load("/own")).res.headers.get("cache-control"), "no-store");
  assert.equal((await t.load("/api/json")).res.headers.get("cache-control"), null);
});

Deno.test("never stored or served: sessions, credentials, other methods, cookies set, not 200, undeclared Vary", async (t) => {
  const make = (handler?: unknown) => {
    const { count, module } = counted();
    return { count, module: handler ? { ...module, handler } : module };
  };
  const session = make();
  const post = make({
    GET: (_r: Request, ctx: { render(): Promise<Response> }) => ctx.render(),
    POST: (_r: Request, ctx: { render(): Promise<Response> }) => ctx.render(),
  });
  const cookie = make({
    GET: async (_r: Request, ctx: { render(): Promise<Response> }) => {
      const res = await ctx.render();
      res.headers.append("Set-Cookie", "seen=1; Path=/");
      return res;
    },
  });
  const notFound = make({
    GET: (_r: Request, ctx: { render(d: unknown, i: unknown): Promise<Response> }) =>
      ctx.render(undefined, { status: 404 }),
  });
  const created = make({
    GET: (_r: Request, ctx: { render(d: unknown, i: unknown): Promise<Response> }) =>
      ctx.render(undefined, { status: 203 }),
  });
  const varies = make({
    GET: (_r: Request, ctx: { render(d: unknown, i: unknown): Promise<Response> }) =>
      ctx.render(undefined, { headers: { Vary: "X-Theme" } }),
  });
  const big = make();
  await using app = await cachedApp({
    "session.tsx": session.module,
    "post.tsx": post.module,
    "cookie.tsx": cookie.module,
    "missing.tsx": notFound.module,
    "created.tsx": created.module,
    "varies.tsx": varies.module,
    "big.tsx": { ...big.module, default: () => <p>{"x".repeat(5000)}{big.count.renders++}</p> },
  }, { pageCache: { maxBodyBytes: 4000 } });

  await t.step("a request with the session cookie, or Authorization, bypasses it", async () => {
    await (await app.get("/session")).text(); // stored
    for (
      const headers of [
        { Cookie: "__Host-session=abcdefabcdefabcdefabcdefabcdefabcdefabcdef" },
        { Cookie: "theme=dark; __Host-session=x" },
        { Cookie: "app-form-state=x" },
        { Cookie: "__Host-app-form-state=x" },
        { Authorization: "Basic YTpi" },
      ] as Record<string, string>[]
    ) {
      const res = await app.get("/session", headers);
      assert.equal(res.headers.get("x-cache"), "BYPASS", JSON.stringify(headers));
      assert.equal(res.headers.get("cache-control"), "private, no-cache");
      assert.equal(res.headers.get("etag"), null);
      await res.text();
    }
    assert.equal(session.count.renders, 6, "each rendered on its own");
    assert.equal(
      (await app.get("/session", { Cookie: "theme=dark" })).headers.get("x-cache"),
      "HIT",
    );
  });

  await t.step("POST renders every time and never fills the cache", async () => {
    for (let i = 0; i < 2; i++) {
      const res = await app.get("/post", {}, "POST");
      assert.equal(res.headers.get("x-cache"), "BYPASS");
      await res.text();
    }
    assert.equal((await app.load("/post")).state, "MISS");
    assert.equal(post.count.renders, 3);
  });

  for (
    const [path, page, why] of [
      ["/cookie", cookie, "sets a cookie"],
      ["/missing", notFound, "is a 404"],
      ["/created", created, "is not a 200"],
      ["/varies", varies, "varies on an undeclared header"],
      ["/big", big, "is larger than maxBodyBytes"],
    ] as const
  ) {
    await t.step(`a response that ${why} is never stored`, async () => {
      for (let i = 0; i < 3; i++) assert.equal((await app.load(path)).state, "MISS");
      assert.equal(page.count.renders, 3);
    });
  }
  assert.equal(await pageKeys(app.kv), 2, "only /session and /post's GET were stored");
});

Deno.test("a render that fails after its shell is never stored", async () => {
  let renders = 0;
  const Boom = ({ failing }: { failing: Promise<never> }) => use(failing);
  await using t = await cachedApp({
    "index.tsx": {
      cache: { maxAge: 60 },
      default: () => {
        renders++;
        const failing = new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error("boom")), 5)
        );
        return (
          <Suspense fallback={<p>wait</p>}>
            <Boom failing={failing} />
          </Suspense>
        );
      },
    },
  });
  for (let i = 0; i < 3; i++) {
    const { state, html } = await t.load("/");
    assert.equal(state, "MISS");
    assert.match(html, /server-side exception/);
  }
  assert.equal(renders, 3);
  assert.equal(await pageKeys(t.kv), 0);
});

Deno.test("poisoning: Host, X-Forwarded-*, odd and huge queries never reach a stored page", async () => {
  const module = {
    cache: { maxAge: 60 },
    default: ({ url, state }: { url: URL; state: Record<string, unknown> }) => (
      <p>
        {url.href} host={String(state.host)} fwd={String(state.fwd)} proto={String(state.proto)}
      </p>
    ),
  };
  await using t = await cachedApp({
    "_middleware.ts": {
      handler: async (c: Context, next: () => Promise<void>) => {
        c.set("host", c.req.header("host"));
        c.set("fwd", c.req.header("x-forwarded-host"));
        c.set("proto", c.req.header("x-forwarded-proto"));
        await next();
      },
    },
    "index.tsx": module,
  });
  // The attacker asks first, with every header that could bend the page.
  const attack = await t.app.request("http://other.example/?b=2&a=1", {
    headers: {
      "X-Forwarded-Host": "evil.example",
      "X-Forwarded-Proto": "http",
      Forwarded: "host=evil.example",
    },
  });
  const attacked = (await attack.text()).replaceAll("<!-- -->", "");
  assert.equal(attack.headers.get("x-cache"), "MISS");
  for (const html of [attacked, (await t.load("/?a=1&b=2")).html]) {
    assert.doesNotMatch(html, /evil|other\.example|http:/);
    assert.match(html, /https:\/\/app\.example\/\?a=1&amp;b=2 host=undefined fwd=undefined/);
  }
  assert.equal((await t.load("/?a=1&b=2")).state, "HIT", "the same key, sorted");
  assert.equal((await t.load("/?a=1&b=%32")).state, "HIT", "re-encoded");
  assert.equal((await t.load("/?a=1&b=2&")).state, "HIT");
  assert.equal((await t.load("/?a=1&b=3")).state, "MISS");
  const huge = await t.load("/?q=" + "x".repeat(5000));
  assert.equal(huge.state, "BYPASS");
  assert.equal((await t.load("/?q=" + "x".repeat(5000))).state, "BYPASS");
});

Deno.test("many distinct queries cannot grow the cache past its bounds", async () => {
  const { module } = counted();
  await using t = await cachedApp({ "index.tsx": module }, {
    pageCache: { kvEntries: 8, memoryEntries: 4 },
  });
  for (let i = 0; i < 60; i++) await (await t.get(`/?n=${i}`)).text();
  assert.ok(await pageKeys(t.kv) <= 8);
  let pieces = 0;
  for await (const entry of t.kv.list({ prefix: ["page_cache"] })) {
    if (entry.key[2] === "piece") pieces++;
  }
  assert.ok(pieces <= 8, `${pieces} body pieces`);

  const memory = memoryLayer(4, 10_000);
  const page = (key: string, bytes: number) =>
    held({
      key,
      body: new Uint8Array(bytes),
      nonce: "",
      etag: "",
      headers: [],
      storedAt: 0,
      maxAge: 1,
      staleWhileRevalidate: 0,
      tags: {},
    }, false);
  for (let i = 0; i < 100; i++) memory.set(page(`k${i}`, 100));
  assert.equal(memory.usage.entries, 4);
  for (let i = 0; i < 100; i++) memory.set(page(`b${i}`, 3000));
  assert.ok(memory.usage.bytes <= 10_000, `${memory.usage.bytes} bytes`);
  memory.set(page("huge", 20_000));
  assert.equal(memory.get("huge"), undefined);
});

Deno.test("a held page's size counts all it keeps: its compressed copies own their memory", () => {
  // node:zlib hands back a view of its 16 KiB output chunk: a held page of a few KB kept two of
  // them whole, 32 KiB the memory layer's bound never counted (1,000 small pages: 32 MB past it).
  for (const length of [2_000, 50_000, 300_000]) {
    const page = held({
      key: "/",
      body: new TextEncoder().encode("<p>a page that compresses well</p>".repeat(length / 34)),
      nonce: "",
      etag: "",
      headers: [],
      storedAt: 0,
      maxAge: 1,
      staleWhileRevalidate: 0,
      tags: {},
    }, true);
    const kept = page.body.buffer.byteLength + page.encoded!.br.buffer.byteLength +
      page.encoded!.gzip.buffer.byteLength;
    assert.ok(kept <= page.size, `${length}: keeps ${kept} bytes, counted ${page.size}`);
  }
});

Deno.test("declared vary headers key the page; Vary says so", async () => {
  const module = {
    cache: { maxAge: 60, vary: ["Accept-Language"] },
    default: () => <p>hello</p>,
  };
  let renders = 0;
  await using t = await cachedApp({
    "index.tsx": { ...module, default: () => <p>render {++renders}</p> },
  });
  assert.equal((await t.load("/", { "Accept-Language": "fr" })).state, "MISS");
  assert.equal((await t.load("/", { "Accept-Language": "de" })).state, "MISS");
  const fr = await t.load("/", { "Accept-Language": "fr" });
  assert.equal(fr.state, "HIT");
  assert.equal(fr.res.headers.get("vary"), "Cookie, accept-language, Accept-Encoding");
  assert.equal((await t.load("/", { "Accept-Language": "x".repeat(300) })).state, "BYPASS");
  assert.equal(renders, 3);
  // A header sent empty and one not sent are two pages: the render sees "" in one, null in the other.
  assert.equal((await t.load("/")).state, "MISS");
  assert.equal((await t.load("/", { "Accept-Language": "" })).state, "MISS");
  assert.equal((await t.load("/")).state, "HIT");
  assert.equal(renders, 5);
  assert.throws(() => resolvePolicy("a.tsx", { maxAge: 1, vary: ["Cookie"] }), /cookie/);
  assert.throws(() => resolvePolicy("a.tsx", { maxAge: 0 }), /routes\/a\.tsx.*maxAge/);
  assert.throws(() => resolvePolicy("a.tsx", { maxAge: 1, tags: ["a b"] }), /tag/);
});

Deno.test("stale-while-revalidate: concurrent stale requests are answered at once, and one render replaces the page", async () => {
  let renders = 0;
  const held: { gate?: Promise<void>; release?: () => void } = {};
  await using t = await cachedApp({
    "index.tsx": {
      cache: { maxAge: 1, staleWhileRevalidate: 60 },
      handler: {
        async GET(_req, ctx) {
          renders++;
          if (held.gate) await held.gate;
          return ctx.render(renders);
        },
      },
      default: ({ data }: { data: number }) => <p>render {data}</p>,
    },
  });
  assert.match((await t.load("/")).html, /render 1/);
  held.gate = new Promise((resolve) => held.release = resolve);
  await new Promise((resolve) => setTimeout(resolve, 1100)); // past maxAge (whole seconds)
  // The re-render is held back: every stale request still answers, with the stored page.
  const stale = await Promise.all(Array.from({ length: 20 }, () => t.load("/")));
  for (const { state, html } of stale) {
    assert.equal(state, "STALE");
    assert.match(html, /render 1/);
  }
  // The render starts in the background (after a KV read and the lease): wait for it, bounded.
  for (let i = 0; i < 200 && renders < 2; i++) await new Promise((r) => setTimeout(r, 10));
  const more = await Promise.all(Array.from({ length: 20 }, () => t.load("/")));
  assert.ok(more.every(({ state }) => state === "STALE"));
  assert.equal(renders, 2, "forty stale requests, one render");
  held.release!();
  let after = await t.load("/");
  for (let i = 0; i < 100 && !/render 2/.test(after.html); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    after = await t.load("/");
  }
  assert.match(after.html, /render 2/);
  assert.equal(after.state, "HIT");
  assert.equal(renders, 2);
});

Deno.test("revalidateTag from a handler drops the tagged pages and only those", async () => {
  let version = 1;
  const page = (tags: string[]) => ({
    cache: { maxAge: 600, tags },
    handler: {
      GET: (_r: Request, ctx: { render(d: number): Promise<Response> }) => ctx.render(version),
    },
    default: ({ data }: { data: number }) => <p>version {data}</p>,
  });
  await using t = await cachedApp({
    "news.tsx": page(["news"]),
    "other.tsx": page(["other"]),
    "api/publish.ts": {
      handler: {
        async POST(_req, ctx) {
          version++;
          await revalidateTag("news", ctx);
          return new Response(null, { status: 204 });
        },
      },
    },
  });
  await t.load("/news");
  await t.load("/other");
  assert.equal((await t.load("/news")).state, "HIT");
  assert.equal((await t.get("/api/publish", {}, "POST")).status, 204);
  const news = await t.load("/news");
  assert.equal(news.state, "MISS");
  assert.match(news.html, /version 2/);
  const other = await t.load("/other");
  assert.equal(other.state, "HIT");
  assert.match(other.html, /version 1/);
  await assert.rejects(
    () => revalidateTag("a b"),
    /not a tag/,
  );
});

Deno.test("revalidateTag from a background job, given its context, drops the tagged pages", async () => {
  let version = 1;
  const jobs = defineJobs({
    publish: {
      async run(_: undefined, job) {
        version++;
        await revalidateTag("news", job); // a job answers no request: its context has the store
      },
    },
  });
  await using t = await cachedApp(
    {
      "news.tsx": {
        cache: { maxAge: 600, tags: ["news"] },
        handler: {
          GET: (_r: Request, ctx: { render(d: number): Promise<Response> }) => ctx.render(version),
        },
        default: ({ data }: { data: number }) => <p>version {data}</p>,
      },
    },
    {},
    jobs,
  );
  await t.load("/news");
  assert.equal((await t.load("/news")).state, "HIT");
  const tried = await runJob(t.app, jobs, "publish", undefined);
  assert.equal(tried.digest, undefined, "the job ran to its end");
  const news = await t.load("/news");
  assert.equal(news.state, "MISS");
  assert.match(news.html, /version 2/);
});

Deno.test("without a configured origin the cache stays off: cached routes render every time, private", async () => {
  const { count, module } = counted();
  const kv = await Deno.openKv(":memory:");
  try {
    const app = memoryApp({ routes: { "index.tsx": module } }, { kv });
    for (let i = 0; i < 2; i++) {
      const res = await app.request("/");
      assert.equal(res.headers.get("x-cache"), null);
      assert.equal(res.headers.get("cache-control"), "private, no-cache");
      await res.text();
    }
    await app.close();
  } finally {
    kv.close();
  }
  assert.equal(count.renders, 2);
});

Deno.test("tags from the route's params: revalidateTag drops one entity's page, not the others", async () => {
  const renders: Record<string, number> = {};
  await using t = await cachedApp({
    "posts/[slug].tsx": {
      cache: {
        maxAge: 600,
        tags: ({ params, url }: { params: Record<string, string>; url: URL }) => {
          assert.equal(url.origin, ORIGIN, "the canonical URL, never the client's Host");
          return ["posts", `post:${params.slug}`];
        },
      },
      handler: {
        GET(
          _req: Request,
          ctx: { params: { slug: string }; render(d: string): Promise<Response> },
        ) {
          renders[ctx.params.slug] = (renders[ctx.params.slug] ?? 0) + 1;
          return ctx.render(`${ctx.params.slug} ${renders[ctx.params.slug]}`);
        },
      },
      default: ({ data }: { data: string }) => <p>post {data}</p>,
    },
    "api/edit.ts": {
      handler: {
        async POST(req: Request, ctx: RouteContext) {
          await revalidateTag(`post:${new URL(req.url).searchParams.get("slug")}`, ctx);
          return new Response(null, { status: 204 });
        },
      },
    },
  });
  for (const slug of ["a", "b"]) {
    assert.equal((await t.load(`/posts/${slug}`)).state, "MISS");
    assert.equal((await t.load(`/posts/${slug}`)).state, "HIT");
  }
  assert.equal((await t.get("/api/edit?slug=a", {}, "POST")).status, 204);
  const a = await t.load("/posts/a");
  assert.equal(a.state, "MISS");
  assert.match(a.html, /post a 2/);
  const b = await t.load("/posts/b");
  assert.equal(b.state, "HIT", "another entity's page stays");
  assert.match(b.html, /post b 1/);
  // A param no tag can hold (too long, not ASCII): rendered every time, never stored.
  for (const slug of ["x".repeat(200), "caf%C3%A9"]) {
    assert.equal((await t.load(`/posts/${slug}`)).state, "BYPASS");
    assert.equal((await t.load(`/posts/${slug}`)).state, "BYPASS");
  }
});

Deno.test("tags from a function: more than 16, or not a list, and the request bypasses", async () => {
  await using t = await cachedApp({
    "many.tsx": {
      cache: { maxAge: 60, tags: () => Array.from({ length: 17 }, (_, i) => `t${i}`) },
      default: () => <p>many</p>,
    },
    "odd.tsx": {
      cache: { maxAge: 60, tags: (() => "not-a-list") as unknown as () => string[] },
      default: () => <p>odd</p>,
    },
  });
  for (const path of ["/many", "/odd"]) {
    const { state, res } = await t.load(path);
    assert.equal(res.status, 200);
    assert.equal(state, "BYPASS", path);
  }
});

Deno.test("tag versions: a process keeps at most MAX_TRACKED tags, and a dropped one is read again", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const versions = tagVersions(kv, 60_000);
    await versions.fresh(["first"]);
    const page = versions.snapshot(["first"]);
    assert.ok(versions.current(page));
    const many = Array.from({ length: MAX_TRACKED }, (_, i) => `tag:${i}`);
    await versions.fresh(many);
    assert.equal(versions.current(page), false, "forgotten: not current until read again");
    await kv.atomic().sum(["page_cache_tags", "first"], 1n).commit();
    await versions.fresh(["first"]);
    assert.equal(versions.current(page), false, "read again: the page is older than the tag");
    assert.ok(versions.current(versions.snapshot(["first"])));
  } finally {
    kv.close();
  }
});

Deno.test("tag versions: a revalidation in another isolate is read at the next request, not after checkMs", async () => {
  await using store = await tempStore();
  const path = store.path;
  const kv = await Deno.openKv(path);
  // Another isolate of this process on the same file, as a `deno serve --parallel` worker is.
  const tags = import.meta.resolve("../lib/cache/tags.ts");
  const worker = new Worker(
    `data:text/javascript,${
      encodeURIComponent(`import { bumpTag } from "${tags}";
      const kv = await Deno.openKv(${JSON.stringify(path)});
      self.onmessage = async () => { await bumpTag(kv, "wall"); self.postMessage("bumped"); };
      self.postMessage("ready");`)
    }`,
    { type: "module" },
  );
  const said = () =>
    new Promise((resolve) => worker.addEventListener("message", resolve, { once: true }));
  try {
    await said(); // ready
    // A minute between checks: only the push can make this isolate read the tag again.
    const versions = tagVersions(kv, 60_000);
    await versions.fresh(["wall"]);
    const page = versions.snapshot(["wall"]);
    assert.equal(versions.fresh(["wall"]), undefined, "read a moment ago: nothing due");
    const bumped = said();
    worker.postMessage("bump");
    await bumped;
    let due: Promise<void> | undefined;
    // The message crosses isolates on its own schedule: wait for it, boundedly.
    for (let i = 0; i < 500 && !due; i++) {
      due = versions.fresh(["wall"]);
      if (!due) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(due, "the other isolate's revalidation made the tag due");
    await due;
    assert.equal(versions.current(page), false, "the page from before is dropped");
    assert.ok(versions.current(versions.snapshot(["wall"])));
    assert.equal(versions.fresh(["wall"]), undefined, "read again once, then nothing is due");
    versions.close();
  } finally {
    worker.terminate();
    kv.close();
  }
});

Deno.test("a cached page's guard still runs on a hit: who it refuses never gets the page", async () => {
  const gate = { open: true };
  await using t = await cachedApp({
    "members/_middleware.ts": {
      handler: async (c: Context, next: () => Promise<void>) => {
        if (!gate.open || c.req.header("x-blocked") === "yes") throw httpError(403, "Refused");
        await next();
      },
    },
    "members/index.tsx": { cache: { maxAge: 600 }, default: () => <p>secret plans</p> },
  });
  assert.equal((await t.load("/members")).state, "MISS");
  const hit = await t.load("/members");
  assert.equal(hit.state, "HIT");
  assert.match(hit.html, /secret plans/);
  const refusals: Record<string, string>[] = [
    { "X-Blocked": "yes" },
    { "X-Blocked": "yes", "If-None-Match": "*" },
  ];
  for (const headers of refusals) {
    const refused = await t.load("/members", headers);
    assert.equal(refused.res.status, 403, JSON.stringify(headers));
    assert.equal(refused.state, null);
    assert.doesNotMatch(refused.html, /secret plans/);
  }
  gate.open = false; // the guard now refuses everyone: the stored page goes to nobody
  const closed = await t.load("/members");
  assert.equal(closed.res.status, 403);
  assert.doesNotMatch(closed.html, /secret plans/);
});

Deno.test("app.close() waits for the background renders: no KV failure after the store closes", async () => {
  const lines: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => lines.push(args.join(" "));
  try {
    let release!: () => void;
    let renders = 0;
    const t = await cachedApp({
      "index.tsx": {
        cache: { maxAge: 1, staleWhileRevalidate: 60 },
        handler: {
          async GET(_req: Request, ctx: { render(d: number): Promise<Response> }) {
            if (++renders > 1) await new Promise<void>((resolve) => release = resolve);
            return ctx.render(renders);
          },
        },
        default: ({ data }: { data: number }) => <p>render {data}</p>,
      },
    });
    await t.load("/");
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past maxAge
    assert.equal((await t.load("/")).state, "STALE");
    for (let i = 0; i < 200 && renders < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(renders, 2, "a render in the background, held");
    const closed = t.app.close();
    release();
    await closed;
    t.kv.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    console.log = original;
  }
  const warnings = lines.filter((line) => /"level":"(warn|error)"/.test(line));
  assert.deepEqual(warnings, [], "no 'revalidate failed: Bad resource ID'");
});

Deno.test("Vary names its headers in one order on a MISS, a HIT and a HEAD", async () => {
  const declared = {
    cache: { maxAge: 60, vary: ["Accept-Language"] },
    default: () => <p>hello</p>,
  };
  await using t = await cachedApp({
    "index.tsx": { cache: { maxAge: 60 }, default: () => <p>plain</p> },
    "declared.tsx": declared,
  });
  for (const encoding of ["gzip, br", "gzip", "identity", undefined]) {
    const headers: Record<string, string> = encoding ? { "Accept-Encoding": encoding } : {};
    for (
      const [path, vary] of [
        ["/", "Cookie, Accept-Encoding"],
        ["/declared", "Cookie, accept-language, Accept-Encoding"],
      ]
    ) {
      const url = `${path}?e=${encoding}`; // a page of its own for each encoding: a MISS first
      const seen: string[] = [];
      for (const method of ["GET", "GET", "HEAD"]) {
        const res = await t.get(url, { ...headers, "Accept-Language": "fr" }, method);
        await res.arrayBuffer(); // read whole: a miss is stored once its body is
        seen.push(`${res.headers.get("x-cache")} ${res.headers.get("vary")}`);
      }
      const [first, second, head] = seen;
      assert.match(first, /^MISS /, `${url} ${encoding}`);
      assert.match(second, /^HIT /, `${url} ${encoding}: ${seen}`);
      for (const answer of seen) {
        assert.equal(answer.slice(answer.indexOf(" ") + 1), vary, `${url} ${encoding}: ${seen}`);
      }
      assert.match(head, /^HIT /, `${url} ${encoding}`);
    }
  }
});

Deno.test("a render in the background leaves nothing behind once its page is stored", async () => {
  // Attack 12: its signal followed the app's closing signal (AbortSignal.any), which kept it, and
  // the render's request and listeners on it, until the app closed.
  let renders = 0;
  const filler = "x".repeat(20_000);
  await using t = await cachedApp({
    "index.tsx": {
      cache: { maxAge: 1, staleWhileRevalidate: 600 },
      handler: {
        GET(_req, ctx) {
          renders++;
          return ctx.render(renders);
        },
      },
      default: ({ data }: { data: number }) => <p>render {data} {filler}</p>,
    },
  });
  const N = 600;
  for (let i = 0; i < N; i++) await (await t.get(`/?q=${i}`)).arrayBuffer();
  await new Promise((resolve) => setTimeout(resolve, 1100)); // past maxAge (whole seconds)
  const before = await heapAfterGc();
  for (let i = 0; i < N; i++) {
    const res = await t.get(`/?q=${i}`);
    assert.equal(res.headers.get("x-cache"), "STALE");
    await res.arrayBuffer();
    for (let j = 0; j < 500 && renders < N + i + 1; j++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  const grown = await heapGrowth(before, 600_000);
  assert.equal(renders, 2 * N);
  // Before: some 2 KB a render (1.3 MB for these 600), kept while the app ran.
  assert.ok(grown < 600_000, `${N} renders in the background left ${(grown / 1e3).toFixed(0)} KB`);
});

Deno.test("a render in the background that begins once the app is closing is ended at once", async () => {
  // Review 12: its signal followed `closing` by a listener, which a signal aborted already never
  // calls: closed while the render's lease was being taken, it ran on to its time limit.
  const seen: boolean[] = [];
  let renders = 0;
  const kv = await Deno.openKv(":memory:");
  const held: { gate?: Promise<void>; reached?: () => void } = {};
  const reached = new Promise<void>((resolve) => held.reached = resolve);
  let release!: () => void;
  // The store as the app sees it: once armed, the next commit (the render's lease) waits.
  const gated = new Proxy(kv, {
    get(target, name) {
      if (name !== "atomic") {
        const value = Reflect.get(target, name, target);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return () => {
        const op = target.atomic();
        const commit = op.commit.bind(op);
        op.commit = async () => {
          const gate = held.gate;
          if (gate) {
            held.gate = undefined;
            held.reached!();
            await gate;
          }
          return commit();
        };
        return op;
      };
    },
  });
  const app = memoryApp({
    routes: {
      "index.tsx": {
        cache: { maxAge: 1, staleWhileRevalidate: 60 },
        handler: {
          GET(req: Request, ctx: { render(d: number): Promise<Response> }) {
            if (++renders > 1) seen.push(req.signal.aborted);
            return ctx.render(renders);
          },
        },
        default: ({ data }: { data: number }) => <p>render {data}</p>,
      },
    },
  }, { kv: gated, origins: [ORIGIN], allowedHosts: ["app.example"] });
  try {
    await (await app.request(ORIGIN + "/")).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past maxAge (whole seconds)
    held.gate = new Promise((resolve) => release = resolve);
    const stale = await app.request(ORIGIN + "/");
    assert.equal(stale.headers.get("x-cache"), "STALE");
    await stale.arrayBuffer();
    await reached; // the background job takes its lease
    const closed = app.close();
    release();
    await closed;
  } finally {
    release?.();
    kv.close();
  }
  assert.deepEqual(seen.filter((aborted) => !aborted), [], "a render ran on past the app's close");
});

Deno.test("a request deadline of days: a stale page is still rendered again in the background", async () => {
  // Review 12: the render limit, twice REQUEST_TIMEOUT_MS and a second, past 2^31 - 1 ms is set
  // to 1 ms by Deno: every render in the background was aborted before its page could be kept.
  let renders = 0;
  let seenAborted = false;
  await using t = await cachedApp({
    "index.tsx": {
      cache: { maxAge: 1, staleWhileRevalidate: 60 },
      handler: {
        async GET(req: Request, ctx: { render(d: number): Promise<Response> }) {
          // A page whose data takes a moment, as any read of a store does: past a timer's 1 ms.
          await new Promise((resolve) => setTimeout(resolve, 20));
          if (req.signal.aborted) seenAborted = true;
          return ctx.render(++renders);
        },
      },
      default: ({ data }: { data: number }) => <p>render {data}</p>,
    },
  }, { requestTimeoutMs: 2_000_000_000 });
  assert.match((await t.load("/")).html, /render 1/);
  await new Promise((resolve) => setTimeout(resolve, 1100)); // past maxAge (whole seconds)
  assert.equal((await t.load("/")).state, "STALE");
  let after = await t.load("/");
  for (let i = 0; i < 100 && !/render 2/.test(after.html); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    after = await t.load("/");
  }
  assert.equal(seenAborted, false, "the render in the background was aborted at once");
  assert.match(after.html, /render 2/);
});
