/**
 * @module
 * The routing rules of README's "Routes" over real HTTP, on a copy of the project with routes
 * added for them: `_middleware` chains (order, short-circuit, changed responses, `ctx.state`, the
 * not-found page), nested `_layout`s, a `handler` that is one function, `ctx.render`'s status and
 * headers, and what a module with a POST handler and a page answers to each method.
 */
import assert from "node:assert/strict";
import { copyProject } from "./helpers/project_copy.ts";
import { startServer } from "./helpers/server.ts";

/**
 * Each middleware (Hono's own kind) adds its name to the `trail` variable on the way in and to
 * `X-Unwound` on the way out.
 */
const ROOT_MIDDLEWARE = `import type { Middleware } from "../lib/mod.ts";

export const handler: Middleware = async (c, next) => {
  c.set("trail", ["root"]);
  await next();
  c.res.headers.append("X-Unwound", "root");
};
`;

const OUTER_MIDDLEWARE = `import type { Middleware } from "../../lib/mod.ts";

export const handler: Middleware = async (c, next) => {
  (c.get("trail") as string[]).push("outer");
  await next();
  c.res.headers.append("X-Unwound", "outer");
};
`;

/** An array: a guard that answers by itself on `?deny`, then the trail. */
const INNER_MIDDLEWARE = `import type { Middleware } from "../../../lib/mod.ts";

const guard: Middleware = async (c, next) => {
  if (c.req.query("deny") !== undefined) return c.text("denied by inner", 403);
  await next();
};

const trail: Middleware = async (c, next) => {
  (c.get("trail") as string[]).push("inner");
  await next();
  c.res.headers.append("X-Unwound", "inner");
};

export const handler = [guard, trail];
`;

const layout = (name: string, lib: string) =>
  `import type { LayoutProps } from "${lib}";

export default function Layout({ Component }: LayoutProps) {
  return <section className="${name}"><Component /></section>;
}
`;

/** The page shows the trail the middleware left in `state`. */
const TRAIL_PAGE = `export default function Trail({ state }: PageProps) {
  return <p id="trail">{(state.trail as string[]).join(",")}</p>;
}
`;

const SIBLING_PAGE = `import type { PageProps } from "../../lib/mod.ts";

${TRAIL_PAGE}`;

const INNER_PAGE = `import type { Handlers, PageProps } from "../../../lib/mod.ts";

export const handler: Handlers = {
  GET(_req, ctx) {
    (ctx.state.trail as string[]).push("handler");
    return ctx.render();
  },
};

${TRAIL_PAGE}`;

const ANY_METHOD = `import type { Handler } from "../lib/mod.ts";

export const handler: Handler = (req) => new Response(\`\${req.method} handled\`);
`;

const TEAPOT = `import type { Handlers, PageProps } from "../lib/mod.ts";

export const handler: Handlers<string> = {
  GET: (_req, ctx) => ctx.render("short and stout", { status: 418, headers: { "X-Teapot": "yes" } }),
};

export default function Teapot({ data }: PageProps<string>) {
  return <p id="data">{data}</p>;
}
`;

const POST_AND_PAGE = `import type { Handlers } from "../lib/mod.ts";

export const handler: Handlers = {
  async POST(req) {
    return new Response(\`posted \${await req.text()}\`, { status: 201 });
  },
};

export default function Form() {
  return <form method="post"><button type="submit">Send</button></form>;
}
`;

Deno.test("routing: middleware, layouts and handlers over HTTP", async (t) => {
  await using project = await copyProject();
  await project.write("routes/_middleware.ts", ROOT_MIDDLEWARE);
  await project.write("routes/outer/_middleware.ts", OUTER_MIDDLEWARE);
  await project.write("routes/outer/_layout.tsx", layout("outer", "../../lib/mod.ts"));
  await project.write("routes/outer/sibling.tsx", SIBLING_PAGE);
  await project.write("routes/outer/inner/_middleware.ts", INNER_MIDDLEWARE);
  await project.write("routes/outer/inner/_layout.tsx", layout("inner", "../../../lib/mod.ts"));
  await project.write("routes/outer/inner/page.tsx", INNER_PAGE);
  await project.write("routes/any.ts", ANY_METHOD);
  await project.write("routes/teapot.tsx", TEAPOT);
  await project.write("routes/form.tsx", POST_AND_PAGE);
  await using server = await startServer({}, { root: project.root });
  const get = async (path: string, init?: RequestInit) => {
    const res = await server.fetch(path, init);
    return { res, body: await res.text() };
  };

  await t.step(
    "middleware runs outer folder first, all before the handler; state reaches the page",
    async () => {
      const { res, body } = await get("/outer/inner/page");
      assert.equal(res.status, 200);
      assert.ok(body.includes('<p id="trail">root,outer,inner,handler</p>'), body);
    },
  );

  await t.step("middleware can change the response after next(), innermost first", async () => {
    const { res } = await get("/outer/inner/page");
    assert.equal(res.headers.get("x-unwound"), "inner, outer, root");
  });

  await t.step("a folder's middleware runs for its folder and below, not beside it", async () => {
    const { res, body } = await get("/outer/sibling");
    assert.equal(res.status, 200);
    assert.ok(body.includes('<p id="trail">root,outer</p>'), body);
    assert.equal(res.headers.get("x-unwound"), "outer, root");
  });

  await t.step("a middleware can answer by itself: nothing after it runs", async () => {
    const { res, body } = await get("/outer/inner/page?deny");
    assert.equal(res.status, 403);
    assert.equal(body, "denied by inner");
    assert.equal(res.headers.get("x-unwound"), "outer, root", "only the outer ones unwind");
  });

  await t.step("the root folder's middleware also runs for the not-found page", async () => {
    const { res, body } = await get("/no/such/page");
    assert.equal(res.status, 404);
    assert.ok(body.includes("<h1>Page not found</h1>"));
    assert.equal(res.headers.get("x-unwound"), "root");
  });

  await t.step("layouts nest outermost first around the page", async () => {
    const inner = (await get("/outer/inner/page")).body;
    assert.match(
      inner,
      /<main><section class="outer"><section class="inner"><p id="trail">[^<]*<\/p><\/section><\/section><\/main>/,
    );
    const sibling = (await get("/outer/sibling")).body;
    assert.match(
      sibling,
      /<main><section class="outer"><p id="trail">[^<]*<\/p><\/section><\/main>/,
    );
  });

  await t.step("a handler that is a single function handles every method", async () => {
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      const { res, body } = await get("/any", { method });
      assert.equal(res.status, 200, method);
      assert.equal(body, `${method} handled`);
    }
  });

  await t.step(
    "ctx.render(data, { status, headers }) sends that status and those headers",
    async () => {
      const { res, body } = await get("/teapot");
      assert.equal(res.status, 418);
      assert.equal(res.headers.get("x-teapot"), "yes");
      assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
      assert.ok(body.includes('<p id="data">short and stout</p>'), body);
    },
  );

  await t.step(
    "a POST handler beside a page: GET renders the page, POST runs the handler",
    async () => {
      const page = await get("/form");
      assert.equal(page.res.status, 200);
      assert.ok(
        page.body.includes('<form method="post"><button type="submit">Send</button></form>'),
      );
      const posted = await get("/form", { method: "POST", body: "hello" });
      assert.equal(posted.res.status, 201);
      assert.equal(posted.body, "posted hello");
    },
  );

  await t.step("other methods get 405 with Allow: GET, HEAD, POST", async () => {
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      const { res } = await get("/form", { method });
      assert.equal(res.status, 405, method);
      const allow = res.headers.get("allow")?.split(", ").sort();
      assert.deepEqual(allow, ["GET", "HEAD", "POST"], method);
    }
  });

  await t.step("HEAD answers like GET, with no body and no false Content-Length", async () => {
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
});
