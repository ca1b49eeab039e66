/**
 * @module
 * The public types a route, layout, middleware or `_app` module is written against, and the route
 * parameters a file's name gives (`blog/[slug].tsx` -> `{ slug: string }`), worked out by the type
 * checker from the name alone.
 */
import type { Context as HonoContext, Hono, MiddlewareHandler } from "hono";
import type { ComponentType } from "react";

/**
 * What middleware set for this request (`c.set("theme", ...)`), as handlers and pages read it,
 * untyped. An app declares its own `State` once and types every middleware, handler, page, layout
 * and action with it through `createDefine<State>()`; the framework keeps nothing of its own there.
 *
 * @example
 * ```tsx
 * import type { PageProps } from "shell";
 *
 * export default function Themed({ state }: PageProps) {
 *   return <p>Theme: {String(state.theme ?? "light")}</p>;
 * }
 * ```
 * @see docs/routing.md - Typed state
 */
export type State = Record<string, unknown>;

/**
 * Hono's request context, as middleware gets it (`c`) and a server action reads it through
 * `requestContext()`: the request (`c.req`), what middleware set (`c.get`, `c.set`, `c.var`), the
 * response's headers (`c.header`), and Hono's helpers such as `getCookie(c, name)`. Untyped state;
 * `StateContext<State>` is the same context with the app's state typed.
 *
 * @example
 * ```ts
 * import type { Context } from "shell";
 *
 * export function languageOf(c: Context): string {
 *   return c.req.header("accept-language")?.split(",")[0] ?? "en";
 * }
 * ```
 * @see docs/routing.md - Middleware
 */
export type Context = HonoContext;

/**
 * Hono's request context with the app's state typed: `c.var`, `c.get` and `c.set` know `State`'s
 * keys and their types. What `define.middleware` hands a middleware and `define.context()` an
 * action; Hono's helpers (`getCookie(c, ...)`) take it as they take any context.
 *
 * @example
 * ```ts
 * import type { StateContext } from "shell";
 *
 * interface AppState {
 *   theme?: "light" | "dark";
 * }
 *
 * export function themeOf(c: StateContext<AppState>): "light" | "dark" {
 *   return c.var.theme ?? "light";
 * }
 * ```
 * @see docs/routing.md - Typed state
 */
export interface StateContext<S extends object> extends Context {
  /** What middleware set for this request: the app's state (and what Hono's own declare). */
  readonly var: Readonly<Declared<Context["var"]> & S>;
  /** One value of the state. */
  get<K extends keyof S>(key: K): S[K];
  /** Sets one value of the state, for what runs after (middleware, the handler, the page). */
  set<K extends keyof S>(key: K, value: S[K]): void;
}

/**
 * `T` without its index signatures: the keys Hono's own middleware declare (`jwtPayload`, ...).
 *
 * @internal
 */
type Declared<T> = {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K];
};

/**
 * A `_middleware.ts` export: Hono's own middleware, so `hono/basic-auth`, `hono/cors`, `hono/jwt`
 * and the like work as they are. Give it a name: with telemetry on, its span is named after it.
 *
 * @example
 * ```ts
 * // routes/reports/_middleware.ts
 * import type { Middleware } from "shell";
 *
 * export const handler: Middleware = async function timing(c, next) {
 *   const started = performance.now();
 *   await next();
 *   c.header("Server-Timing", `app;dur=${(performance.now() - started).toFixed(1)}`);
 * };
 * ```
 * @see docs/routing.md - Middleware
 */
export type Middleware = MiddlewareHandler;

/**
 * A middleware written with the app's state typed (`define.middleware`): Hono's `(c, next)`, its
 * `c` a `StateContext<State>`.
 *
 * @example
 * ```ts
 * import type { StateMiddleware } from "shell";
 *
 * interface AppState {
 *   theme?: "light" | "dark";
 * }
 *
 * export const theme: StateMiddleware<AppState> = async function theme(c, next) {
 *   c.set("theme", c.req.header("sec-ch-prefers-color-scheme") === "dark" ? "dark" : "light");
 *   await next();
 * };
 * ```
 * @see docs/routing.md - Typed state
 */
export type StateMiddleware<S extends object> = (
  c: StateContext<S>,
  next: () => Promise<void>,
) => Promise<Response | void> | Response | void;

/**
 * The Hono app `createApp` builds on, as a telemetry plugin sees it (to mount routes of its own)
 * and as `app.request()` answers in tests.
 *
 * @example
 * ```ts
 * import type { HonoApp } from "shell/server";
 *
 * export function mountHealth(app: HonoApp): void {
 *   app.get("/_health", (c) => c.text("ok"));
 * }
 * ```
 * @see docs/telemetry.md
 */
export type HonoApp = Hono;

/**
 * How `ctx.render(data, init)` answers: the status (200 by default) and headers of the page.
 *
 * @example
 * ```ts
 * import type { Handlers, RenderInit } from "shell";
 *
 * const gone: RenderInit = { status: 410, headers: { "Cache-Control": "no-store" } };
 * export const handler: Handlers<{ id: string }> = {
 *   GET: (_req, ctx) => ctx.render({ id: ctx.params.id }, gone),
 * };
 * ```
 * @see docs/routing.md - A route module
 */
export interface RenderInit {
  /** The response's status; settled before any HTML is sent. */
  status?: number;
  /** Headers added to the page's response. */
  headers?: HeadersInit;
}

/**
 * The parameters of a route file, from its name alone: `blog/[slug].tsx` -> `{ slug: string }`,
 * `docs/[...path].tsx` -> `{ path: string }` (slashes kept).
 *
 * @example
 * ```ts
 * import type { RouteParams } from "shell";
 *
 * const params: RouteParams<"shop/[shop]/[item].tsx"> = { shop: "north", item: "42" };
 * ```
 * @see docs/routing.md - Typed routes
 */
export type RouteParams<File extends string> = {
  [Name in ParamName<Segment<WithoutExtension<File>>>]: string;
};
/**
 * A route file's path without its extension.
 *
 * @internal
 */
type WithoutExtension<File> = File extends `${infer Path}.${"tsx" | "ts" | "jsx" | "js"}` ? Path
  : File;
/**
 * The segments of a path, as a union.
 *
 * @internal
 */
type Segment<Path> = Path extends `${infer Head}/${infer Tail}` ? Head | Segment<Tail> : Path;
/**
 * The parameter a segment names, if any.
 *
 * @internal
 */
type ParamName<S> = S extends `[...${infer Name}]` ? Name : S extends `[${infer Name}]` ? Name
: never;

/**
 * The parameters of a route whose file is not named to the type checker (see `defineRoute`): any
 * name, each a string.
 *
 * @example
 * ```ts
 * import type { AnyParams } from "shell";
 *
 * const params: AnyParams = { slug: "hello-world" };
 * ```
 * @see docs/routing.md - A route module
 */
export type AnyParams = Record<string, string>;

/**
 * A rendered page, what `ctx.render()` returns; its type remembers the data, so that
 * `defineRoute` can check the page's props against what the handlers render.
 *
 * @example
 * ```ts
 * import type { PageResponse, RouteContext } from "shell";
 *
 * function show(ctx: RouteContext<string>): Promise<PageResponse<string>> {
 *   return ctx.render("hello");
 * }
 * ```
 * @see docs/routing.md - Typed routes
 */
export type PageResponse<Data> = Response & {
  /** Never set: it carries the page's data type, for the type checker only. */
  readonly "~data"?: Data;
};

/**
 * `render(data)`: the data is required unless the page takes none.
 *
 * @internal
 */
export type RenderArgs<Data> = undefined extends Data ? [data?: Data, init?: RenderInit]
  : [data: Data, init?: RenderInit];

/**
 * A handler's second argument: the route's parameters, the URL, what middleware set, and
 * `render()`, which streams the page with the data the handler loaded.
 *
 * @example
 * ```ts
 * import type { RouteContext } from "shell";
 *
 * export function GET(_req: Request, ctx: RouteContext<{ slug: string }>) {
 *   return ctx.render({ slug: ctx.params.slug });
 * }
 * ```
 * @see docs/routing.md - A route module
 */
export interface RouteContext<Data = unknown, Params = AnyParams, S = State> {
  /** Route parameters: `[slug]` -> `params.slug`, `[...path]` -> `params.path` (slashes kept). */
  params: Params;
  /** The request's URL, parsed. */
  url: URL;
  /** What middleware set (`c.set(...)`) for this request: the app's `State`. */
  state: S;
  /** Streams the page with `data`; the status is 200 unless `init` says otherwise. */
  render(...args: RenderArgs<Data>): Promise<PageResponse<Data>>;
}

/**
 * A route's handler for one method (or, as a module's whole `handler`, for every method): returns
 * a Response, or `ctx.render(data)` for the page.
 *
 * @example
 * ```ts
 * // routes/api/time.ts
 * import type { Handler } from "shell";
 *
 * export const handler: Handler = () => Response.json({ now: new Date().toISOString() });
 * ```
 * @see docs/routing.md - A route module
 */
export type Handler<Data = unknown, Params = AnyParams, S = State> = (
  req: Request,
  ctx: RouteContext<Data, Params, S>,
) => Response | Promise<Response>;

/**
 * An HTTP method a route module can have a handler for. `HEAD` falls back to `GET`.
 *
 * @example
 * ```ts
 * import type { Method } from "shell";
 *
 * const readOnly: Method[] = ["GET", "HEAD", "OPTIONS"];
 * ```
 * @see docs/routing.md - A route module
 */
export type Method = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/**
 * A route module's `handler`: one handler per method. A method without one gets 405 with `Allow`.
 *
 * @example
 * ```ts
 * import { type Handlers, notFound } from "shell";
 *
 * const POSTS = new Map([["hello-world", "Hello, world"]]);
 *
 * export const handler: Handlers<string> = {
 *   GET(_req, ctx) {
 *     const title = POSTS.get(ctx.params.slug);
 *     if (title === undefined) throw notFound();
 *     return ctx.render(title);
 *   },
 * };
 * ```
 * @see docs/routing.md - A route module
 */
export type Handlers<Data = unknown, Params = AnyParams, S = State> = Partial<
  Record<Method, Handler<Data, Params, S>>
>;

/**
 * A page's props: what its handler rendered (`data`), the route's parameters, the URL and what
 * middleware set.
 *
 * @example
 * ```tsx
 * import type { PageProps } from "shell";
 *
 * export default function Post({ data, params }: PageProps<{ title: string }>) {
 *   return <h1 id={params.slug}>{data.title}</h1>;
 * }
 * ```
 * @see docs/routing.md - A route module
 */
export interface PageProps<Data = unknown, Params = AnyParams, S = State> {
  /** What the handler passed to `ctx.render()`. */
  data: Data;
  /** Route parameters, as the handler got them. */
  params: Params;
  /** The request's URL. */
  url: URL;
  /** What middleware set for this request: the app's `State`. */
  state: S;
}

/**
 * The props of an `_error.tsx` page (and of `_404.tsx`): the request's page props, and the status
 * and message of the expected error it shows (`httpError(403, "Only members can see this board")`).
 *
 * @example
 * ```tsx
 * // routes/board/_error.tsx
 * import type { ErrorPageProps } from "shell";
 *
 * export default function BoardError({ status, message }: ErrorPageProps) {
 *   return (
 *     <>
 *       <title>{message}</title>
 *       <h1>{message}</h1>
 *       {status === 403 && <p><a href="/login">Sign in with another account</a></p>}
 *     </>
 *   );
 * }
 * ```
 */
export interface ErrorPageProps<Params = AnyParams, S = State>
  extends PageProps<undefined, Params, S> {
  /** The 4xx status the request is answered with. */
  status: number;
  /** The error's message: product text, shown as it is. */
  message: string;
  /** The error catalogue's name for the refusal (`httpError`'s `code`), when it gave one. */
  code?: string;
}

/**
 * A `_layout.tsx`'s props: the page's props plus `Component`, the page (or the next layout in) to
 * render where the page goes.
 *
 * @example
 * ```tsx
 * // routes/_layout.tsx
 * import type { LayoutProps } from "shell";
 *
 * export default function Layout({ Component }: LayoutProps) {
 *   return (
 *     <main>
 *       <Component />
 *     </main>
 *   );
 * }
 * ```
 * @see docs/routing.md - A route module
 */
export interface LayoutProps<Data = unknown, Params = AnyParams, S = State>
  extends PageProps<Data, Params, S> {
  /** The page (or the next layout in) to render inside this layout. */
  Component: ComponentType;
}

/**
 * `_app.tsx`'s props: the document renders `Component` inside `<body>`.
 *
 * @example
 * ```tsx
 * // routes/_app.tsx
 * import type { AppProps } from "shell";
 *
 * export default function App({ Component }: AppProps) {
 *   return (
 *     <html lang="en">
 *       <head>
 *         <meta charSet="utf-8" />
 *       </head>
 *       <body>
 *         <Component />
 *       </body>
 *     </html>
 *   );
 * }
 * ```
 * @see docs/routing.md - Files and URLs
 */
export type AppProps<Data = unknown, S = State> = LayoutProps<Data, AnyParams, S>;
