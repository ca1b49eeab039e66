/**
 * @module
 * Page cache hits answered ahead of the app's middleware (lib/cache/fast_hit.ts): which requests
 * are answered there and which go the whole way; that such a hit answers exactly as the whole app
 * does (headers field by field, 304, HEAD, codings, `Vary`), logs its line and keeps its id; that a
 * route with a `_middleware.ts` of the team's always runs it; that `Host` and `X-Forwarded-Host`
 * never choose a page and the host guard still applies. The rest of the cache:
 * tests/page_cache_test.tsx.
 */
import assert from "node:assert/strict";
import { type Context, revalidateTag } from "../lib/mod.ts";
import type { MiddlewareHandler } from "hono";
import { captureLogs } from "shell/testing";
import type { Telemetry } from "../lib/server/telemetry.ts";
import { memoryApp, type TestOptions } from "./helpers/app.ts";
import { type RawRequest, requestBytes, send } from "./reliability/raw_http.ts";
import type { AppFiles } from "./helpers/app.ts";
import { fastHits } from "../lib/cache/fast_hit.ts";
import { held } from "../lib/cache/entry.ts";
import { memoryLayer } from "../lib/cache/memory.ts";
import { resolvePolicy } from "../lib/cache/policy.ts";
import { tagVersions } from "../lib/cache/tags.ts";
import { cspAround } from "../lib/server/security.ts";

const ORIGIN = "https://app.example";

/**
 * Requests that reached the app's Hono chain, counted by a middleware a telemetry plugin mounts
 * before every other (`Telemetry.routes`): a hit answered ahead of the chain is not counted.
 */
function chainSpy() {
  const seen = { requests: 0 };
  const spy: MiddlewareHandler = async (_c, next) => {
    seen.requests++;
    await next();
  };
  const telemetry: Telemetry = {
    routes: (app) => void app.use(spy),
    captureFailure: () => ({ trace_id: null, span_id: null, sentry_event_id: null }),
    flush: () => Promise.resolve(),
  };
  return { seen, telemetry };
}

/** An app on a KV store of its own, its origin configured, answering two hosts. */
async function cachedApp(routes: AppFiles["routes"], options: TestOptions = {}) {
  const kv = await Deno.openKv(":memory:");
  const app = memoryApp({ routes }, {
    kv,
    origins: [ORIGIN],
    allowedHosts: ["app.example", "other.example"],
    ...options,
  });
  return {
    app,
    get: (path: string, headers: Record<string, string> = {}, method = "GET") =>
      app.request(path.startsWith("http") ? path : ORIGIN + path, { headers, method }),
    async [Symbol.asyncDispose]() {
      await app.close();
      kv.close();
    },
  };
}

/** A page large enough to be held compressed, showing its canonical URL. */
const page = (cache: unknown = { maxAge: 60 }) => ({
  cache,
  default: ({ url }: { url: URL }) => (
    <main>
      <p id="url">{url.href}</p>
      {Array.from({ length: 40 }, (_, i) => <p key={i}>line {i} of a page worth compressing</p>)}
    </main>
  ),
});

/** Headers as a record, lower-cased, with the CSP nonce and the ETag's value masked. */
function fields(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of res.headers) {
    if (name === "date") continue;
    out[name] = value.replace(/'nonce-[^']+'/, "'nonce-…'").replace(/^W\/"[\w-]+"$/, 'W/"…"');
  }
  // Whole seconds since each app stored its page: two pages stored a moment apart may straddle a
  // second (a loaded machine). That it is there, and a number, is what both must agree on.
  if (out.age !== undefined) out.age = /^\d+$/.test(out.age) ? "<seconds>" : out.age;
  return out;
}

Deno.test("a hit ahead of the middleware answers as the whole app does, header by header", async () => {
  const { seen, telemetry } = chainSpy();
  await using fast = await cachedApp(
    { "index.tsx": page({ maxAge: 60, staleWhileRevalidate: 9 }) },
    {
      telemetry,
    },
  );
  await using slow = await cachedApp(
    { "index.tsx": page({ maxAge: 60, staleWhileRevalidate: 9 }) },
    {
      pageCache: { fastHits: false },
    },
  );
  for (const t of [fast, slow]) await (await t.get("/")).text(); // the MISS that stores it
  const etagOf = async (t: typeof fast) => (await t.get("/")).headers.get("etag")!;
  const [fastTag, slowTag] = [await etagOf(fast), await etagOf(slow)];
  const before = seen.requests;
  const cases: [string, Record<string, string>][] = [
    ["GET, no coding", {}],
    ["GET, gzip as browsers ask", { "Accept-Encoding": "gzip, deflate, br, zstd" }],
    ["GET, brotli preferred", { "Accept-Encoding": "br, gzip;q=0.5" }],
    ["GET, identity only", { "Accept-Encoding": "identity, *;q=0" }],
    ["HEAD", { "Accept-Encoding": "gzip" }],
    ["304", { "If-None-Match": "<etag>" }],
    ["304 for *, on HEAD", { "If-None-Match": "*" }],
    ["200 for another tag", { "If-None-Match": 'W/"other"' }],
    // What a client controls that the whole app reads alike: no partial answers, odd q-values.
    ["Range, the whole page", { Range: "bytes=0-10" }],
    ["unparseable q-values", { "Accept-Encoding": "gzip;q=abc, br;q=1.0001" }],
    ["every coding refused", { "Accept-Encoding": "gzip;q=0, br;q=0, identity;q=0" }],
    ["a long If-None-Match", { "If-None-Match": 'W/"a", '.repeat(2000) + 'W/"b"' }],
  ];
  for (const [name, headers] of cases) {
    const method = name.includes("HEAD") ? "HEAD" : "GET";
    const send = (t: typeof fast, etag: string) => {
      const given: Record<string, string> = { ...headers, "X-Request-Id": "req-1" };
      if (given["If-None-Match"] === "<etag>") given["If-None-Match"] = etag;
      return t.get("/", given, method);
    };
    const [a, b] = [await send(fast, fastTag), await send(slow, slowTag)];
    assert.equal(a.status, b.status, name);
    assert.equal(a.headers.get("x-cache"), "HIT", name);
    assert.deepEqual(fields(a), fields(b), name);
    const [bodyA, bodyB] = [
      new Uint8Array(await a.arrayBuffer()),
      new Uint8Array(await b.arrayBuffer()),
    ];
    // Nonces of one length: the bodies as they are have one length too (compressed, not quite).
    if (!a.headers.has("content-encoding")) {
      assert.equal(bodyA.byteLength, bodyB.byteLength, `${name}: the body's length`);
    }
    if (method === "HEAD" || a.status === 304) assert.equal(bodyA.byteLength, 0, name);
  }
  assert.equal(
    seen.requests,
    before,
    "each of the fast app's hits was answered ahead of its chain",
  );
  // The CSP names the nonce its body carries: the render's.
  const res = await fast.get("/");
  const html = await res.text();
  const csp = /'nonce-([^']+)'/.exec(res.headers.get("content-security-policy")!)![1];
  assert.ok(html.includes(`nonce="${csp}"`), "the body's scripts carry the CSP's nonce");
});

Deno.test("a hit of a route without middleware never enters the app's chain; the rest does", async () => {
  const { seen, telemetry } = chainSpy();
  await using t = await cachedApp({ "index.tsx": page() }, { telemetry });
  const count = async (headers: Record<string, string> = {}, method = "GET") => {
    const before = seen.requests;
    const res = await t.get("/", headers, method);
    await res.arrayBuffer(); // a miss left before its end is not stored
    return { entered: seen.requests - before, state: res.headers.get("x-cache"), res };
  };
  // The miss, and its render (a request of the cache's own); the URL is now known as a page.
  assert.equal((await count()).entered, 2);
  for (
    const [headers, method] of [
      [{}, "GET"],
      [{}, "HEAD"],
      [{ "If-None-Match": "*" }, "GET"],
      [{ Cookie: "theme=dark; consent=yes" }, "GET"],
      [{ "Accept-Encoding": "br" }, "GET"],
    ] as const
  ) {
    const { entered, state } = await count(headers, method);
    assert.equal(entered, 0, `${method} ${JSON.stringify(headers)}`);
    assert.equal(state, "HIT");
  }
  // `session` is the cookie's name over http: here (https) the chain decides, and serves the hit.
  const conservative = await count({ Cookie: "session=abc" });
  assert.deepEqual([conservative.entered, conservative.state], [1, "HIT"]);
  const withState: Record<string, string>[] = [
    { Cookie: "__Host-session=abc" },
    { Cookie: "theme=dark; __Host-session=abc" },
    { Cookie: "app-form-state=x.y" },
    { Cookie: "__Host-app-form-state=x.y" },
    { Authorization: "Bearer x" },
  ];
  for (const headers of withState) {
    const { entered, state } = await count(headers);
    assert.equal(entered, 1, JSON.stringify(headers));
    assert.notEqual(state, "HIT", JSON.stringify(headers));
  }
  const post = await count({}, "POST");
  assert.equal(post.entered, 1);
  await t.app.close();
  assert.equal((await count()).entered, 1, "a closing app answers everything the whole way");
});

/**
 * A telemetry plugin with middleware around every request, counting the requests it sees, and
 * `hit` (unless `recordsHits` is false) answering `accept`, recording what it was given.
 */
function tracingTelemetry(recordsHits: boolean, accept = true) {
  const seen = { middleware: 0, hits: [] as { req: Request; route: string }[] };
  const telemetry: Telemetry = {
    middleware: async (_c, next) => {
      seen.middleware++;
      await next();
    },
    captureFailure: () => ({ trace_id: null, span_id: null, sentry_event_id: null }),
    flush: () => Promise.resolve(),
  };
  if (recordsHits) {
    telemetry.hit = (req, route) => {
      seen.hits.push({ req, route });
      return accept;
    };
  }
  return { seen, telemetry };
}

Deno.test("telemetry with middleware: hits ahead of it only when its `hit` records them", async (t) => {
  const routes = { "blog/[slug].tsx": page() };
  const hitsOf = async (telemetry: Telemetry) => {
    await using app = await cachedApp(routes, { telemetry });
    await (await app.get("/blog/first")).text(); // the miss, which stores it
    const answers = [];
    for (const method of ["GET", "HEAD", "GET"]) {
      const req = new Request(`${ORIGIN}/blog/first`, { method });
      const res = await app.app.fetch(req);
      await res.arrayBuffer();
      answers.push({ req, state: res.headers.get("x-cache") });
    }
    return answers;
  };

  await t.step(
    "with `hit`: called with the request and its route, the middleware skipped",
    async () => {
      const { seen, telemetry } = tracingTelemetry(true);
      const answers = await hitsOf(telemetry);
      assert.deepEqual(answers.map((a) => a.state), ["HIT", "HIT", "HIT"]);
      assert.equal(seen.middleware, 2, "the miss and its render only");
      assert.deepEqual(seen.hits.map((h) => h.route), [
        "/blog/:slug",
        "/blog/:slug",
        "/blog/:slug",
      ]);
      assert.deepEqual(
        seen.hits.map((h) => h.req),
        answers.map((a) => a.req),
        "the request itself",
      );
    },
  );

  await t.step("`hit` says no: the whole app answers, its middleware around it", async () => {
    const { seen, telemetry } = tracingTelemetry(true, false);
    const answers = await hitsOf(telemetry);
    assert.deepEqual(answers.map((a) => a.state), ["HIT", "HIT", "HIT"]);
    assert.equal(seen.middleware, 2 + 3);
    assert.equal(seen.hits.length, 3);
  });

  await t.step("middleware without `hit`: every hit goes the whole way", async () => {
    const { seen, telemetry } = tracingTelemetry(false);
    const answers = await hitsOf(telemetry);
    assert.deepEqual(answers.map((a) => a.state), ["HIT", "HIT", "HIT"]);
    assert.equal(seen.middleware, 2 + 3);
  });
});

Deno.test("over HTTP: a hit ahead of the chain streams whole in each coding, HEAD without a body", async () => {
  const { seen, telemetry } = chainSpy();
  await using kv = await Deno.openKv(":memory:");
  // Bound first, on a port the system picks (none another process can take meanwhile); the app,
  // which needs its origin, made for that port.
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req, info) => app.fetch(req, info),
  );
  const { port } = server.addr;
  const app = memoryApp({ routes: { "index.tsx": page() } }, {
    kv,
    origins: [`http://127.0.0.1:${port}`],
    telemetry,
  });
  try {
    const get = (init: RequestInit = {}) => fetch(`http://127.0.0.1:${port}/`, init);
    const miss = await (await get()).text();
    const before = seen.requests;
    for (const coding of ["identity", "gzip", "br"]) {
      // fetch decodes what it asked for; the bytes it got are the page's.
      const res = await get({ headers: { "Accept-Encoding": coding } });
      assert.equal(res.headers.get("x-cache"), "HIT", coding);
      assert.equal(res.headers.get("content-encoding"), coding === "identity" ? null : coding);
      assert.equal(await res.text(), miss, coding);
    }
    const head = await get({ method: "HEAD", headers: { "Accept-Encoding": "gzip" } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("x-cache"), "HIT");
    assert.equal(await head.text(), "");
    assert.equal(seen.requests, before, "each answered ahead of the chain");
  } finally {
    await app.close();
    await server.shutdown();
  }
});

Deno.test("a route with a _middleware.ts of the team's runs it on every hit", async () => {
  const gate = { maintenance: false };
  await using t = await cachedApp({
    "shop/_middleware.ts": {
      handler: async (c: Context, next: () => Promise<void>) => {
        if (gate.maintenance) return c.redirect("/maintenance", 307);
        await next();
        c.header("X-Shop", "checked");
      },
    },
    "shop/index.tsx": page(),
  });
  await (await t.get("/shop")).text();
  for (let i = 0; i < 3; i++) {
    const hit = await t.get("/shop");
    await hit.text();
    assert.equal(hit.headers.get("x-cache"), "HIT");
    assert.equal(hit.headers.get("x-shop"), "checked", "the middleware's header, on every hit");
  }
  gate.maintenance = true;
  const redirected = await t.get("/shop");
  assert.equal(redirected.status, 307);
  assert.equal(redirected.headers.get("location"), "/maintenance");
  assert.equal(redirected.headers.get("x-cache"), null);
});

Deno.test("Host and X-Forwarded-Host never choose a hit; the host guard still applies", async () => {
  const { seen, telemetry } = chainSpy();
  await using t = await cachedApp({ "index.tsx": page() }, { telemetry });
  for (let i = 0; i < 2; i++) await (await t.get("/?a=1")).text();
  const before = seen.requests;
  const answers = [
    await t.get("https://other.example/?a=1"),
    await t.get("/?a=1", { "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "http" }),
    await t.get("https://other.example/?a=%31", { "X-Forwarded-Host": "evil.example" }),
  ];
  for (const res of answers) {
    assert.equal(res.headers.get("x-cache"), "HIT");
    const html = await res.text();
    assert.match(html, /<p id="url">https:\/\/app\.example\/\?a=1<\/p>/);
    assert.doesNotMatch(html, /evil|other\.example/);
  }
  assert.equal(seen.requests, before, "answered ahead of the chain");
  const refused = await t.get("https://evil.example/?a=1");
  assert.equal(refused.status, 400);
  assert.equal(refused.headers.get("x-cache"), null);
  await refused.body?.cancel();
});

Deno.test("a hit ahead of the middleware: declared Vary headers choose the page", async () => {
  const { seen, telemetry } = chainSpy();
  await using t = await cachedApp({
    "index.tsx": {
      cache: { maxAge: 60, vary: ["Accept-Language"] },
      default: ({ url: _ }: { url: URL }) => <p>{crypto.randomUUID()} {"x".repeat(2000)}</p>,
    },
  }, { telemetry });
  const body = async (lang?: string) => {
    const res = await t.get("/", lang ? { "Accept-Language": lang } : {});
    const state = res.headers.get("x-cache");
    if (state === "HIT") {
      assert.match(res.headers.get("vary")!, /^Cookie, accept-language, Accept-Encoding$/);
    }
    return { state, html: await res.text() };
  };
  const first = { en: await body("en"), de: await body("de"), none: await body() };
  for (const state of Object.values(first)) assert.equal(state.state, "MISS");
  await body("en"); // known as a page now
  const before = seen.requests;
  for (const [lang, was] of Object.entries(first)) {
    const again = await body(lang === "none" ? undefined : lang);
    assert.equal(again.state, "HIT", lang);
    assert.equal(again.html, was.html, lang);
  }
  assert.equal(seen.requests, before, "all three answered ahead of the chain");
  assert.notEqual(first.en.html, first.de.html);
});

Deno.test("a hit ahead of the middleware logs its line with its request id", async () => {
  const { seen, telemetry } = chainSpy();
  await using t = await cachedApp({ "index.tsx": page() }, { logRequests: true, telemetry });
  for (let i = 0; i < 2; i++) await (await t.get("/?q=1")).text();
  using logs = captureLogs();
  const res = await t.get("/?q=1", { "X-Request-Id": "from-the-proxy" });
  await res.text();
  assert.equal(res.headers.get("x-request-id"), "from-the-proxy");
  assert.equal(seen.requests, 2, "the miss and its render only: the hit was answered ahead");
  assert.equal(logs.lines.length, 1);
  const [line] = logs.lines;
  assert.equal(line.msg, "GET / 200");
  assert.equal(line.path, "/");
  assert.equal(line.request_id, "from-the-proxy");
  assert.equal(typeof line.duration_ms, "number");
  const fresh = await t.get("/?q=1", { "X-Request-Id": "not sane <>" });
  await fresh.text();
  assert.match(
    fresh.headers.get("x-request-id")!,
    /^[0-9a-f-]{36}$/,
    "a fresh id, as the chain gives",
  );
});

Deno.test("revalidateTag: the next request goes the whole way and renders the page again", async () => {
  const renders = { n: 0 };
  await using t = await cachedApp({
    "index.tsx": {
      cache: { maxAge: 600, tags: ["news"] },
      default: () => <p>render {++renders.n} {"x".repeat(2000)}</p>,
    },
    "api/publish.ts": {
      handler: {
        async POST(_req: Request, ctx: Parameters<typeof revalidateTag>[1]) {
          await revalidateTag("news", ctx);
          return new Response("ok");
        },
      },
    },
  });
  for (let i = 0; i < 3; i++) await (await t.get("/")).text();
  assert.equal(renders.n, 1);
  await (await t.get("/api/publish", {}, "POST")).text();
  const after = await t.get("/");
  assert.equal(after.headers.get("x-cache"), "MISS");
  assert.match((await after.text()).replaceAll("<!-- -->", ""), /render 2/);
});

Deno.test("fastHits(): only a fresh page held, of a URL learned, for a request without state", async () => {
  await using kv = await Deno.openKv(":memory:");
  const memory = memoryLayer(10, 1 << 20);
  const tags = tagVersions(kv, 60_000);
  const closing = new AbortController();
  const own = new WeakSet<Request>();
  const setup = {
    origin: ORIGIN,
    memory,
    tags,
    compress: true,
    closing: closing.signal,
    csp: cspAround(),
    logRequests: false,
    maxUrls: 2,
    skip: (req: Request) => own.has(req),
  };
  const hits = fastHits(setup);
  const policy = resolvePolicy("index.tsx", { maxAge: 60, tags: ["t"] });
  const body = new TextEncoder().encode(`<p nonce="abc">${"y".repeat(4000)}</p>`);
  const store = (url: string, storedAt = Date.now()) =>
    memory.set(held({
      key: url,
      body,
      nonce: "abc",
      etag: 'W/"e"',
      headers: [["content-type", "text/html; charset=utf-8"]],
      storedAt,
      maxAge: 60,
      staleWhileRevalidate: 0,
      tags: { t: 0 },
    }, true));
  const req = (path: string, init: RequestInit = {}) =>
    new Request(`http://localhost${path}`, init);
  store(`${ORIGIN}/a`);
  assert.equal(hits.answer(req("/a")), undefined, "a URL not yet learned as a page");
  const route = { policy, route: "/a" };
  hits.learn(`${ORIGIN}/a`, route);
  assert.equal(hits.answer(req("/a")), undefined, "the tag's version is not known yet");
  await tags.fresh(["t"]);
  const res = hits.answer(req("/a", { headers: { "Accept-Encoding": "gzip" } }))!;
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-encoding"), "gzip");
  assert.match(res.headers.get("content-security-policy")!, /'nonce-abc'/);
  await res.body?.cancel();
  const refused: [string, Request][] = [
    ["POST", req("/a", { method: "POST" })],
    ["a body", req("/a", { method: "GET", headers: { "Content-Length": "3" } })],
    ["a session", req("/a", { headers: { Cookie: "session=1" } })],
    ["Authorization", req("/a", { headers: { Authorization: "Basic eA==" } })],
    ["another path", req("/b")],
  ];
  const ownRender = req("/a");
  own.add(ownRender);
  refused.push(["the cache's own render", ownRender]);
  for (const [why, request] of refused) assert.equal(hits.answer(request), undefined, why);
  // The telemetry's record: asked only for a hit about to be answered, which it may refuse.
  const recorded: string[] = [];
  const recording = fastHits({ ...setup, hit: (_req, route) => (recorded.push(route), false) });
  recording.learn(`${ORIGIN}/a`, route);
  assert.equal(recording.answer(req("/a")), undefined, "refused by the telemetry");
  assert.equal(recording.answer(req("/a", { method: "POST" })), undefined);
  assert.deepEqual(recorded, ["/a"]);
  store(`${ORIGIN}/a`, Date.now() - 61_000);
  assert.equal(hits.answer(req("/a")), undefined, "stale: the app revalidates it");
  store(`${ORIGIN}/a`);
  await revalidateTagOn(kv, "t");
  assert.equal(hits.answer(req("/a")), undefined, "a tag moved");
  hits.learn(`${ORIGIN}/b`, { policy, route: "/b" });
  hits.learn(`${ORIGIN}/c`, { policy, route: "/c" });
  assert.equal(hits.answer(req("/a")), undefined, "forgotten past maxUrls");
  closing.abort();
  tags.close();
});

/** `revalidateTag` on `kv` without a request (tags.ts). */
async function revalidateTagOn(kv: Deno.Kv, tag: string) {
  const { bumpTag } = await import("../lib/cache/tags.ts");
  await bumpTag(kv, tag);
}

Deno.test("a path with dot segments never stores one route's page under another's (raw HTTP)", async () => {
  // Deno.serve hands `..`, `%2e%2e` and `\` to the app as sent: Hono routes on the raw path, while
  // the URL parser resolves it to another. The page of that other URL was stored under the policy
  // of the route Hono matched (its maxAge, its tags) and learned as that route's — with no
  // middleware — so answered ahead of the chain, skipping the other route's `_middleware.ts`.
  const gate = { maintenance: false, renders: 0 };
  await using kv = await Deno.openKv(":memory:");
  // Bound first, on a port the system picks (none another process can take meanwhile); the app,
  // which needs its origin, made for that port.
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req, info) => app.fetch(req, info),
  );
  const { port } = server.addr;
  const app = memoryApp({
    routes: {
      "docs/[...path].tsx": page({ maxAge: 3600 }),
      "blog/[slug].tsx": page({ maxAge: 3600 }),
      "index.tsx": {
        cache: { maxAge: 3600, tags: ["home"] },
        default: () => <p>home render {++gate.renders} {"h".repeat(2000)}</p>,
      },
      "shop/_middleware.ts": {
        handler: async (c: Context, next: () => Promise<void>) => {
          if (gate.maintenance) return c.redirect("/maintenance", 307);
          await next();
        },
      },
      "shop/index.tsx": page({ maxAge: 3600 }),
      "api/publish.ts": {
        handler: {
          async POST(_req: Request, ctx: Parameters<typeof revalidateTag>[1]) {
            await revalidateTag("home", ctx);
            return new Response("ok");
          },
        },
      },
    },
  }, { kv, origins: [`http://127.0.0.1:${port}`] });
  const raw = (target: string, method = "GET") =>
    send(port, requestBytes(port, { target, method }));
  try {
    const host = `127.0.0.1:${port}`;
    // Each is Hono's route for one path and the URL parser's for another; a `Host` added to the
    // path too (Deno writes it into `req.url` as sent), which the host guard now refuses as well.
    const attacks: RawRequest[] = [
      { target: "/docs/%2e%2e/shop" },
      { target: "/docs/../shop" },
      { target: "/docs/.%2E/shop" },
      { target: "/shop", host: `${host}/docs/..` },
      { target: "/blog/.." },
      { target: "/blog/%2e%2e" },
    ];
    for (const attack of attacks) {
      const name = JSON.stringify(attack);
      for (let i = 0; i < 2; i++) {
        const res = await send(port, requestBytes(port, attack));
        assert.notEqual(res.headers.get("x-cache"), "HIT", name);
        assert.doesNotMatch(res.body, /home render/, name);
      }
    }
    gate.maintenance = true;
    const shop = await raw("/shop");
    assert.equal(shop.status, 307, "the shop's middleware ran");
    assert.equal(shop.headers.get("x-cache"), null);
    // `/` now carries its own tags: revalidating them renders it again.
    await raw("/");
    assert.equal((await raw("/api/publish", "POST")).status, 200);
    const home = await raw("/");
    assert.equal(home.headers.get("x-cache"), "MISS", "dropped by its tag");
    assert.match(home.body.replaceAll("<!-- -->", ""), new RegExp(`home render ${gate.renders}`));
  } finally {
    await app.close();
    await server.shutdown();
  }
});
