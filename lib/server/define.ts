/**
 * @module
 * Typed routes and typed state. `createDefine<State>()`, written once in the app, gives
 * `define.middleware`, `define.handlers`, `define.page`, `define.layout`, `define.errorPage` and
 * `define.context()` (for server actions), each typed with the app's `State` - the one declaration
 * of what middleware puts on a request (`state.user`, say). `define.route("blog/[slug].tsx")` (and
 * `defineRoute` for an app without a `State`) also types a route module from its file's name: the
 * params from the name, the page's data from what its handlers render. So `params.nope`, a page
 * expecting other data than its handler renders, `render()` without its data and
 * `state.nope` are all `deno check` errors. The build writes a check into the manifest that each
 * module names its own file (`RouteFileCheck`). At run time every one returns what it is given.
 */
import type { FunctionComponent } from "react";
import { requestContext } from "./context.ts";
import type {
  AnyParams,
  ErrorPageProps,
  Handler,
  Handlers,
  LayoutProps,
  Middleware,
  PageProps,
  RouteParams,
  State,
  StateContext,
  StateMiddleware,
} from "./types.ts";

/**
 * Carries the file a route was typed for.
 *
 * @internal
 */
declare const FILE: unique symbol;
/**
 * Carries the data a route's handlers render.
 *
 * @internal
 */
declare const DATA: unique symbol;

/**
 * Marks what `defineRoute(file)` made, for the manifest's check.
 *
 * @internal
 */
export interface OfFile<File extends string> {
  readonly [FILE]?: File;
}

/**
 * A route's handlers as `defineRoute(file).handlers()` returns them: typed for the file's params,
 * remembering the data they render.
 *
 * @internal
 */
export type TypedHandlers<Data, File extends string, S = State> =
  & (Handlers<Data, RouteParams<File>, S> | Handler<Data, RouteParams<File>, S>)
  & OfFile<File>
  & { readonly [DATA]?: (data: Data) => void };

/**
 * The data a route's handlers render, from `typeof handler`; `undefined` for none.
 *
 * @internal
 */
export type DataOf<H> = NonNullable<H extends { readonly [DATA]?: infer D } ? D : never> extends
  (data: infer Data) => void ? Data : undefined;

/**
 * A route's page as `defineRoute(file).page()` returns it.
 *
 * @internal
 */
export type TypedPage<Data, File extends string, S = State> =
  & FunctionComponent<PageProps<Data, RouteParams<File>, S>>
  & OfFile<File>;

/**
 * What `defineRoute(file)` returns: `handlers()` and `page()`, typed for the route file `File`.
 *
 * @example
 * ```tsx
 * import { defineRoute, type RouteDefinition } from "shell";
 *
 * const blog: RouteDefinition<"blog/[slug].tsx"> = defineRoute("blog/[slug].tsx");
 * const handler = blog.handlers<string>({ GET: (_req, ctx) => ctx.render(ctx.params.slug) });
 * const Page = blog.page<typeof handler>(({ data }) => <h1>{data}</h1>);
 * ```
 * @see docs/routing.md - Typed routes
 */
export interface RouteDefinition<File extends string, S = State> {
  /** The route's handlers, rendering `Data` (none by default). */
  handlers<Data = undefined>(
    handlers: Handlers<Data, RouteParams<File>, S> | Handler<Data, RouteParams<File>, S>,
  ): TypedHandlers<Data, File, S>;
  /** The route's page: `page<typeof handler>(...)` receives what the handlers render. */
  page<H = undefined>(
    page: FunctionComponent<PageProps<DataOf<H>, RouteParams<File>, S>>,
  ): TypedPage<DataOf<H>, File, S>;
}

/**
 * Types a route module from its own file name: the params from the name, the page's data from
 * what the handlers render. `ctx.params.nope`, a page expecting other data than its handlers
 * render, and `ctx.render()` without the data are `deno check` errors; the build checks that the
 * module names its own file. At run time it returns what it is given.
 *
 * @param _file The module's path below `routes/` (`"shop/[id].tsx"`).
 * @returns `handlers()` and `page()` for the module's exports.
 *
 * @example
 * ```tsx
 * // routes/shop/[id].tsx
 * import { defineRoute, notFound } from "shell";
 *
 * export const handler = defineRoute("shop/[id].tsx").handlers<{ id: string; count: number }>({
 *   GET(_req, ctx) {
 *     if (ctx.params.id === "none") throw notFound();
 *     return ctx.render({ id: ctx.params.id, count: 1 });
 *   },
 * });
 *
 * export default defineRoute("shop/[id].tsx").page<typeof handler>(({ data }) => (
 *   <p>{data.count}</p>
 * ));
 * ```
 * @see docs/routing.md - Typed routes
 */
export function defineRoute<const File extends string>(_file: File): RouteDefinition<File> {
  return DEFINITION as RouteDefinition<File>;
}

const DEFINITION: RouteDefinition<string> = {
  handlers: (handlers) => handlers,
  page: (page) => page,
};

/**
 * What `createDefine<State>()` returns: every kind of module an app writes, typed with its `State`.
 * Each function returns what it is given; only the types change.
 *
 * @example
 * ```tsx
 * // routes/_define.ts
 * import { createDefine, type Define } from "shell";
 *
 * export interface State {
 *   theme?: "light" | "dark";
 * }
 * export const define: Define<State> = createDefine<State>();
 * ```
 * @see docs/routing.md - Typed state
 */
export interface Define<S extends object> {
  /** A `_middleware.ts` handler whose `c.var`, `c.get` and `c.set` know the state. */
  middleware(middleware: StateMiddleware<S>): Middleware;
  /** A route's handlers (any params), rendering `Data` (none by default). */
  handlers<Data = undefined>(
    handlers: Handlers<Data, AnyParams, S> | Handler<Data, AnyParams, S>,
  ): TypedHandlers<Data, string, S>;
  /** A page (any params): `page<typeof handler>(...)` receives what the handlers render. */
  page<H = undefined>(
    page: FunctionComponent<PageProps<DataOf<H>, AnyParams, S>>,
  ): TypedPage<DataOf<H>, string, S>;
  /** A `_layout.tsx` or `_app.tsx`. */
  layout(layout: FunctionComponent<LayoutProps<unknown, AnyParams, S>>): FunctionComponent<
    LayoutProps<unknown, AnyParams, S>
  >;
  /** An `_error.tsx`. */
  errorPage(
    page: FunctionComponent<ErrorPageProps<AnyParams, S>>,
  ): FunctionComponent<ErrorPageProps<AnyParams, S>>;
  /** Handlers and page typed for the route file `File` (`"blog/[slug].tsx"`): its params too. */
  route<const File extends string>(file: File): RouteDefinition<File, S>;
  /**
   * In a server action (and the middleware in front of it): the request, as `requestContext()`
   * gives it, with `c.var` typed.
   */
  context(): StateContext<S>;
}

/**
 * Types an app's modules with its `State`, declared once: what its middleware sets on a request
 * (`c.set("user", ...)`) and its handlers (`ctx.state`), pages and layouts (`state`) and server
 * actions (`define.context().var`) read. Write it once in a module of the app and import `define`
 * everywhere. The framework keeps nothing of its own on the state.
 *
 * @returns `define`: `middleware`, `handlers`, `page`, `layout`, `errorPage`, `route(file)` and
 *   `context()`.
 *
 * @example
 * ```tsx
 * // routes/_define.ts
 * import { createDefine } from "shell";
 * import type { UserState } from "shell/auth";
 *
 * export interface State extends UserState {
 *   theme?: "light" | "dark";
 * }
 * export const define = createDefine<State>();
 *
 * // routes/account/index.tsx
 * export default define.page(({ state }) => <p>{state.user?.email}</p>);
 * ```
 * @see docs/routing.md - Typed state
 */
export function createDefine<S extends object>(): Define<S> {
  return {
    // The same function: Hono hands it the context its type describes.
    middleware: (middleware) => middleware as Middleware,
    handlers: (handlers) => handlers,
    page: (page) => page,
    layout: (layout) => layout,
    errorPage: (page) => page,
    route: <const File extends string>(_file: File) => DEFINITION as RouteDefinition<File, S>,
    context: () => requestContext() as StateContext<S>,
  };
}

/** The file a module's `defineRoute` names, if any (`never` when it uses none). */
type DeclaredFile<T> = T extends { readonly [FILE]?: infer F extends string }
  ? string extends F ? never : F
  : never;
type ModuleFile<M> =
  | DeclaredFile<M extends { handler: infer H } ? H : never>
  | DeclaredFile<M extends { default: infer D } ? D : never>;

/**
 * `true` when the route module `M` at `routes/<File>` types itself for its own file (or not at
 * all); otherwise a message, which `Assert` turns into a `deno check` error in the manifest.
 */
export type RouteFileCheck<M, File extends string> = [ModuleFile<M>] extends [never] ? true
  : [ModuleFile<M>] extends [File] ? true
  : `routes/${File} is typed for another file: defineRoute("${ModuleFile<M>}")`;

export type Assert<T extends true> = T;
