/**
 * @module
 * The routing rules of the design's "Routes", in-process, on an app of routes held in memory:
 * `_middleware` chains (order, short-circuit, changed responses, `ctx.state`, the not-found page,
 * unknown URLs in a guarded folder),
 * nested `_layout`s, a `handler` that is one function, `ctx.render`'s status and headers, what a
 * module with a POST handler and a page answers to each method, and HEAD.
 */
import assert from "node:assert/strict";
import {
  type ErrorPageProps,
  type Handler,
  type Handlers,
  httpError,
  type LayoutProps,
  type Middleware,
  type PageProps,
} from "../lib/mod.ts";
import { HonoRequest } from "hono/request";
import { memoryApp } from "./helpers/app.ts";

/**
 * Each middleware (Hono's own kind) adds its name to the `trail` variable on the way in and to
 * `X-Unwound` on the way out.
 */
const trailing = (name: string): Middleware => async (c, next) => {
  if (name === "root") c.set("trail", ["root"]);
  else (c.get("trail") as string[]).push(name);
  await next();
  c.res.headers.append("X-Unwound", name);
};

/** Answers by itself on `?deny`: nothing after it runs. */
const guard: Middleware = async (c, next) => {
  if (c.req.query("deny") !== undefined) return c.text("denied by inner", 403);
  await next();
};

/** Lets only the club "open" by; shows what it saw of the URL's params in `X-Params`. */
const clubGuard: Middleware = async (c, next) => {
  const seen = JSON.stringify(c.req.param());
  if (c.req.param("club") !== "open") return c.text("Members only", 403, { "X-Params": seen });
  await next();
  c.res.headers.set("X-Params", seen);
};

const layout = (name: string) => ({
  default: ({ Component }: LayoutProps) => (
    <section className={name}>
      <Component />
    </section>
  ),
});

/** The page shows the trail the middleware left in `state`. */
const Trail = ({ state }: PageProps) => <p id="trail">{(state.trail as string[]).join(",")}</p>;

const ANY_METHOD: Handler = (req) => new Response(`${req.method} handled`);

const TEAPOT: Handlers<string> = {
  GET: (_req, ctx) =>
    ctx.render("short and stout", { status: 418, headers: { "X-Teapot": "yes" } }),
};

const POST_AND_PAGE: Handlers = {
  async POST(req) {
    return new Response(`posted ${await req.text()}`, { status: 201 });
  },
};

const app = memoryApp({
  routes: {
    "_layout.tsx": {
      default: ({ Component }: LayoutProps) => (
        <main>
          <Component />
        </main>
      ),
    },
    "_404.tsx": { default: () => <h1>Page not found</h1> },
    "_middleware.ts": { handler: trailing("root") },
    "outer/_middleware.ts": { handler: trailing("outer") },
    "outer/_layout.tsx": layout("outer"),
    "outer/sibling.tsx": { default: Trail },
    // An array: the guard, then the trail.
    "outer/inner/_middleware.ts": { handler: [guard, trailing("inner")] },
    "outer/inner/_layout.tsx": layout("inner"),
    "outer/inner/page.tsx": {
      handler: {
        GET(_req, ctx) {
          (ctx.state.trail as string[]).push("handler");
          return ctx.render();
        },
      },
      default: Trail,
    },
    // A dynamic folder, a group (no URL of its own) and a folder with its own error page.
    "teams/[team]/_middleware.ts": { handler: trailing("team") },
    "teams/[team]/index.tsx": { default: Trail },
    "teams/new/_middleware.ts": { handler: trailing("new") },
    "files/[...rest]/_middleware.ts": { handler: trailing("rest") },
    "(staff)/_middleware.ts": { handler: trailing("staff") },
    "(staff)/desk.tsx": { default: Trail },
    "(staff)/office/index.tsx": { default: Trail },
    "(staff)/office/(inner)/rota.tsx": { default: Trail },
    // Two groups' folders with one URL: an unknown URL there could be either's.
    "(staff)/hall/a.tsx": { default: Trail },
    "(crew)/_middleware.ts": { handler: trailing("crew") },
    "(crew)/hall/b.tsx": { default: Trail },
    "members/_middleware.ts": {
      handler: () => Promise.reject(httpError(403, "Members only")),
    },
    "members/_error.tsx": {
      default: ({ status, message }: ErrorPageProps) => <p id="members">{status} {message}</p>,
    },
    "members/list.tsx": { default: () => <p>the list</p> },
    // Refuses clubs other than "open" by the URL's param, as a membership check would.
    "clubs/[club]/_middleware.ts": { handler: clubGuard },
    "clubs/[club]/index.tsx": { default: ({ params }: PageProps) => <p>{params.club}</p> },
    // What the handler saw of the params, for the page to compare with its own.
    "shelves/[shelf].tsx": {
      handler: {
        GET(_req, ctx) {
          return ctx.render(ctx.params);
        },
      },
      default: ({ params, data }: PageProps<unknown>) => (
        <p id="same">{params === data ? "one object" : "two objects"} {params.shelf}</p>
      ),
    },
    "plain.tsx": {
      default: ({ params }: PageProps) => <p id="params">{JSON.stringify(params)}</p>,
    },
    "any.ts": { handler: ANY_METHOD },
    "teapot.tsx": {
      handler: TEAPOT,
      default: ({ data }: PageProps<string>) => <p id="data">{data}</p>,
    },
    "form.tsx": {
      handler: POST_AND_PAGE,
      default: () => (
        <form method="post">
          <button type="submit">Send</button>
        </form>
      ),
    },
  },
});

const get = async (path: string, init?: RequestInit) => {
  const res = await app.request(path, init);
  return { res, body: await res.text() };
};

Deno.test("middleware runs outer folder first, all before the handler; state reaches the page", async () => {
  const { res, body } = await get("/outer/inner/page");
  assert.equal(res.status, 200);
  assert.ok(body.includes('<p id="trail">root,outer,inner,handler</p>'), body);
});

Deno.test("middleware can change the response after next(), innermost first", async () => {
  const { res } = await get("/outer/inner/page");
  assert.equal(res.headers.get("x-unwound"), "inner, outer, root");
});

Deno.test("a folder's middleware runs for its folder and below, not beside it", async () => {
  const { res, body } = await get("/outer/sibling");
  assert.equal(res.status, 200);
  assert.ok(body.includes('<p id="trail">root,outer</p>'), body);
  assert.equal(res.headers.get("x-unwound"), "outer, root");
});

Deno.test("a middleware can answer by itself: nothing after it runs", async () => {
  const { res, body } = await get("/outer/inner/page?deny");
  assert.equal(res.status, 403);
  assert.equal(body, "denied by inner");
  assert.equal(res.headers.get("x-unwound"), "outer, root", "only the outer ones unwind");
});

Deno.test("the root folder's middleware also runs for the not-found page", async () => {
  const { res, body } = await get("/no/such/page");
  assert.equal(res.status, 404);
  assert.ok(body.includes("<h1>Page not found</h1>"));
  assert.equal(res.headers.get("x-unwound"), "root");
});

Deno.test("an unknown URL meets the middleware of the deepest folder it is in, then the not-found page", async () => {
  const unwound = async (path: string) => {
    const { res, body } = await get(path);
    assert.equal(res.status, 404, path);
    assert.ok(body.includes("<h1>Page not found</h1>"), path);
    return res.headers.get("x-unwound");
  };
  assert.equal(await unwound("/outer/nothing"), "outer, root");
  assert.equal(await unwound("/outer/inner/nothing/deeper"), "inner, outer, root");
  assert.equal(await unwound("/outer/inner"), "inner, outer, root", "the folder's own URL");
  assert.equal(await unwound("/outerwear/nothing"), "root", "a name that only begins alike");
  assert.equal(await unwound("/teams/red/nothing"), "team, root", "a dynamic folder");
  assert.equal(await unwound("/teams"), "root", "above the dynamic folder");
  assert.equal(await unwound("/teams/new/nothing"), "new, root", "a static folder before [team]");
  assert.equal(await unwound("/files/a/b/c"), "rest, root", "a catch-all folder, at any depth");
  assert.equal(await unwound("/files"), "root");
  assert.equal(await unwound("/nothing"), "root", "a group's middleware is its pages' only");
  assert.equal(await unwound("/desk/nothing"), "root");
  assert.equal(await unwound("/office/nothing"), "staff, root", "a group's folder, as its pages");
  assert.equal(await unwound("/office/rota/nothing"), "staff, root");
  assert.equal(await unwound("/hall/nothing"), "root", "two groups' folders: either's");
});

Deno.test("a guarded folder's unknown URLs are refused like its pages: nothing tells them apart", async () => {
  const page = await get("/outer/inner/page?deny");
  const unknown = await get("/outer/inner/no-such-page?deny");
  assert.equal(unknown.res.status, 403);
  assert.equal(unknown.body, page.body);
  // The folder's own error page, as for its real page.
  const real = await get("/members/list");
  const missing = await get("/members/missing");
  assert.equal(missing.res.status, 403);
  for (const { body } of [real, missing]) {
    assert.ok(body.includes('<p id="members">403<!-- --> <!-- -->Members only</p>'), body);
  }
});

Deno.test("a folder's middleware sees an unknown URL's params as a page's there", async () => {
  // It saw none: every unknown URL below clubs/open/ was refused as no member's, not a 404.
  const params = async (path: string, status: number) => {
    const res = await app.request(path);
    await res.body?.cancel();
    assert.equal(res.status, status, path);
    return res.headers.get("x-params");
  };
  assert.equal(await params("/clubs/open", 200), '{"club":"open"}');
  assert.equal(await params("/clubs/open/nothing", 404), '{"club":"open"}');
  assert.equal(await params("/clubs/open/", 404), '{"club":"open"}');
  assert.equal(await params("/clubs/a%2Fb/nothing", 403), '{"club":"a/b"}', "decoded, as a page's");
  for (const method of ["HEAD", "POST", "OPTIONS"]) {
    const res = await app.request("/clubs/open/nothing", { method });
    await res.body?.cancel();
    assert.equal(res.status, 404, method);
  }
});

Deno.test("a path 2^16 characters long, or 30,000 folders deep, still meets its folder's guard", async () => {
  const long = `/outer/inner/${"x".repeat(2 ** 16)}?deny`;
  const deep = `/outer/inner${"/a".repeat(30_000)}?deny`;
  for (const path of [long, deep]) {
    const { res, body } = await get(path);
    assert.equal(res.status, 403);
    assert.equal(body, "denied by inner");
  }
});

Deno.test("a page's params are its handler's ctx.params: the URL's params decoded once a request", async () => {
  const { res, body } = await get("/shelves/top%20left");
  assert.equal(res.status, 200);
  assert.match(body, /<p id="same">one object<!-- --> <!-- -->top left<\/p>/);
});

Deno.test("a route without params gets empty ones, Hono's decoding of none skipped", async () => {
  const param = HonoRequest.prototype.param;
  let calls = 0;
  HonoRequest.prototype.param = function (this: HonoRequest, ...args: []) {
    calls++;
    return param.apply(this, args);
  } as typeof param;
  try {
    const plain = await get("/plain");
    assert.equal(plain.res.status, 200);
    assert.match(plain.body, /<p id="params">\{\}<\/p>/);
    assert.equal(calls, 0, "no params to decode");
    assert.match((await get("/shelves/top%20left")).body, /top left/);
    assert.equal(calls, 1, "a route with params still decodes them, once");
  } finally {
    HonoRequest.prototype.param = param;
  }
});

Deno.test("a page's tree is made once, not for each request", async () => {
  let reads = 0;
  const once = {
    get default() {
      reads++;
      return () => <p id="once">once</p>;
    },
  };
  const app = memoryApp({ routes: { "once.tsx": once } });
  const made = reads;
  for (let i = 0; i < 3; i++) {
    const res = await app.request("/once");
    assert.match(await res.text(), /<p id="once">once<\/p>/);
  }
  assert.equal(reads, made, "the page's module read only when the app was made");
});

Deno.test("layouts nest outermost first around the page", async () => {
  const inner = (await get("/outer/inner/page")).body;
  assert.match(
    inner,
    /<main><section class="outer"><section class="inner"><p id="trail">[^<]*<\/p><\/section><\/section><\/main>/,
  );
  const sibling = (await get("/outer/sibling")).body;
  assert.match(sibling, /<main><section class="outer"><p id="trail">[^<]*<\/p><\/section><\/main>/);
});

Deno.test("a handler that is a single function handles every method", async () => {
  for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
    const { res, body } = await get("/any", { method });
    assert.equal(res.status, 200, method);
    assert.equal(body, `${method} handled`);
  }
});

Deno.test("ctx.render(data, { status, headers }) sends that status and those headers", async () => {
  const { res, body } = await get("/teapot");
  assert.equal(res.status, 418);
  assert.equal(res.headers.get("x-teapot"), "yes");
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  assert.ok(body.includes('<p id="data">short and stout</p>'), body);
});

Deno.test("a POST handler beside a page: GET renders the page, POST runs the handler", async () => {
  const page = await get("/form");
  assert.equal(page.res.status, 200);
  assert.ok(page.body.includes('<form method="post"><button type="submit">Send</button></form>'));
  const posted = await get("/form", { method: "POST", body: "hello" });
  assert.equal(posted.res.status, 201);
  assert.equal(posted.body, "posted hello");
});

Deno.test("other methods get 405 with Allow: GET, HEAD, POST", async () => {
  for (const method of ["PUT", "PATCH", "DELETE"]) {
    const { res } = await get("/form", { method });
    assert.equal(res.status, 405, method);
    assert.deepEqual(res.headers.get("allow")?.split(", ").sort(), ["GET", "HEAD", "POST"]);
  }
});

Deno.test("HEAD answers like GET, with no body and no false Content-Length", async () => {
  const page = await get("/form");
  const head = await get("/form", { method: "HEAD" });
  assert.equal(head.res.status, 200);
  assert.equal(head.res.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(head.res.headers.get("x-request-id")?.length, 36);
  // A page streams: no length is known, and a HEAD response may only give the one GET's body has.
  const length = head.res.headers.get("content-length");
  assert.ok(length === null || Number(length) === new TextEncoder().encode(page.body).length);
  assert.equal(head.body, "");
});
