/**
 * @module
 * Typed routes. `defineRoute("blog/[slug].tsx")` types a route module's handlers and page from one
 * place: the params from the file's name, the page's data from what its handlers render. So
 * `params.nope`, a page expecting other data than its handler renders, and `render()` without its
 * data are all `deno check` errors. The build writes a check into the manifest that each module
 * names its own file (`RouteFileCheck`). At run time both functions return what they are given.
 */
import type { FunctionComponent } from "react";
import type { Handler, Handlers, PageProps, RouteParams } from "./types.ts";

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
export type TypedHandlers<Data, File extends string> =
  & (Handlers<Data, RouteParams<File>> | Handler<Data, RouteParams<File>>)
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
export type TypedPage<Data, File extends string> =
  & FunctionComponent<PageProps<Data, RouteParams<File>>>
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
 * @see docs/routing.md — Typed routes
 */
export interface RouteDefinition<File extends string> {
  /** The route's handlers, rendering `Data` (none by default). */
  handlers<Data = undefined>(
    handlers: Handlers<Data, RouteParams<File>> | Handler<Data, RouteParams<File>>,
  ): TypedHandlers<Data, File>;
  /** The route's page: `page<typeof handler>(…)` receives what the handlers render. */
  page<H = undefined>(
    page: FunctionComponent<PageProps<DataOf<H>, RouteParams<File>>>,
  ): TypedPage<DataOf<H>, File>;
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
 * @see docs/routing.md — Typed routes
 */
export function defineRoute<const File extends string>(_file: File): RouteDefinition<File> {
  return DEFINITION as RouteDefinition<File>;
}

const DEFINITION: RouteDefinition<string> = {
  handlers: (handlers) => handlers,
  page: (page) => page,
};

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
