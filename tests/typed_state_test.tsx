/**
 * @module
 * Typed request state: an app declares its `State` once, and `createDefine<State>()` types it in
 * middleware (`c.var`, `c.get`, `c.set`), handlers (`ctx.state`), pages, layouts, error pages, typed
 * routes (their params too) and server actions (`define.context()`), with no cast. The type checks
 * are this file's own: each `@ts-expect-error` below must meet an error, or `deno check` (and so
 * `deno test`) fails on this file. At run time the state holds what the app's middleware set and
 * nothing of the framework's, on pages, error pages, in handlers and in actions alike.
 */
import assert from "node:assert/strict";
import { createDefine, httpError, type Middleware, type StateContext } from "../lib/mod.ts";
import type { User, UserState } from "../lib/auth.ts";
import { encodeCall } from "../lib/shared/action_wire.ts";
import { parse } from "devalue";
import { actionIdOf, memoryApp } from "./helpers/app.ts";

interface State extends UserState {
  theme?: "light" | "dark";
}

const define = createDefine<State>();

/** Guards the lines that must not type-check: they are compiled, never run. */
const NEVER = Deno.args.includes("--never");

const theme: Middleware = define.middleware(async function theme(c, next) {
  const user: User | undefined = c.var.user;
  c.set("theme", user ? "dark" : "light");
  if (NEVER) {
    // @ts-expect-error -- not a key of the app's state
    c.set("nope", 1);
    // @ts-expect-error -- not a value the key takes
    c.set("theme", "blue");
    // @ts-expect-error -- not a key of the app's state
    c.var.nope;
  }
  await next();
});

const handler = define.handlers({
  GET(_req, ctx) {
    const email: string | undefined = ctx.state.user?.email;
    // @ts-expect-error -- not a key of the app's state
    if (NEVER) ctx.state.nope;
    return Response.json({ email, keys: Object.keys(ctx.state).sort() });
  },
});

const Page = define.page(({ state }) => {
  // @ts-expect-error -- the theme is a string union, not a number
  if (NEVER) [state.theme] satisfies number[];
  return <p>{state.theme}: {Object.keys(state).sort().join(",")}</p>;
});

const Layout = define.layout(({ state, Component }) => (
  <main data-theme={state.theme}>
    <Component />
  </main>
));

const ErrorPage = define.errorPage(({ status, state }) => (
  <h1>{status} {state.theme}: {Object.keys(state).sort().join(",")}</h1>
));

const item = define.route("shop/[id].tsx");
const itemHandler = item.handlers<{ id: string; theme?: string }>({
  GET(_req, ctx) {
    // @ts-expect-error -- the file names no such param
    if (NEVER) ctx.params.nope;
    return ctx.render({ id: ctx.params.id, theme: ctx.state.theme });
  },
});
const ItemPage = item.page<typeof itemHandler>(({ data, state }) => (
  <p>{data.id} {state.user?.name ?? "anonymous"}</p>
));

async function whoIsAsking(): Promise<{ theme?: string; keys: string[] }> {
  const c: StateContext<State> = define.context();
  // @ts-expect-error -- not a key of the app's state
  if (NEVER) c.get("nope");
  return await Promise.resolve({ theme: c.var.theme, keys: Object.keys(c.var).sort() });
}

const app = memoryApp({
  routes: {
    "_middleware.ts": { handler: theme },
    "_layout.tsx": { default: Layout },
    "_error.tsx": { default: ErrorPage },
    "page.tsx": { default: Page },
    "api.ts": { handler },
    "shop/[id].tsx": { handler: itemHandler, default: ItemPage },
    "gone.tsx": {
      handler: define.handlers({
        GET() {
          throw httpError(410, "Gone");
        },
      }),
      default: () => <p>never</p>,
    },
  },
  actions: { "routes/_state/actions.ts": { whoIsAsking } },
});

Deno.test("the state holds what the app's middleware set, and nothing of the framework's", async () => {
  const page = await app.request("/page");
  assert.match(await page.text(), /<main data-theme="light"><p>light<!-- -->: <!-- -->theme<\/p>/);

  const api = await app.request("/api");
  assert.deepEqual(await api.json(), { keys: ["theme"] });

  const shop = await app.request("/shop/42");
  assert.match(await shop.text(), /<p>42<!-- --> <!-- -->anonymous<\/p>/);

  const gone = await app.request("/gone", { headers: { Accept: "text/html" } });
  assert.equal(gone.status, 410);
  assert.match(await gone.text(), /<h1>410<!-- --> <!-- -->light<!-- -->: <!-- -->theme<\/h1>/);

  const call = await app.request(
    `/_action/${actionIdOf("routes/_state/actions.ts", "whoIsAsking")}`,
    {
      method: "POST",
      body: encodeCall([]),
      headers: { Origin: "http://localhost", Accept: "application/json" },
    },
  );
  assert.deepEqual(parse(await call.text()), { theme: "light", keys: ["theme"] });
});
