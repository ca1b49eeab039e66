/**
 * @module
 * Typed routes. `defineRoute("blog/[slug].tsx")` types a route module's handlers and page from one
 * place: the params from the file's name, the page's data from what its handlers render. So
 * `params.nope`, a page expecting other data than its handler renders, and `render()` without its
 * data are all `deno check` errors. The build writes a check into the manifest that each module
 * names its own file (`RouteFileCheck`). At run time both functions return what they are given.
 *
 * ```tsx
 * const route = defineRoute("blog/[slug].tsx");
 * export const handler = route.handlers<Post>({
 *   GET: (_req, ctx) => ctx.render(findPost(ctx.params.slug)),
 * });
 * export default route.page<typeof handler>(({ data }) => <h1>{data.title}</h1>);
 * ```
 */
import type { FunctionComponent } from "react";
import type { Handler, Handlers, PageProps, RouteParams } from "./types.ts";

declare const FILE: unique symbol;
declare const DATA: unique symbol;

/** Marks what `defineRoute(file)` made, for the manifest's check. */
export interface OfFile<File extends string> {
  readonly [FILE]?: File;
}

export type TypedHandlers<Data, File extends string> =
  & (Handlers<Data, RouteParams<File>> | Handler<Data, RouteParams<File>>)
  & OfFile<File>
  & { readonly [DATA]?: (data: Data) => void };

/** The data a route's handlers render, from `typeof handler`; `undefined` for none. */
export type DataOf<H> = NonNullable<H extends { readonly [DATA]?: infer D } ? D : never> extends
  (data: infer Data) => void ? Data : undefined;

export type TypedPage<Data, File extends string> =
  & FunctionComponent<PageProps<Data, RouteParams<File>>>
  & OfFile<File>;

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

/** `file`: the module's path below `routes/`, as the build checks. */
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
