/**
 * @module
 * The public types a route, layout, middleware or `_app` module is written against, and the route
 * parameters a file's name gives (`blog/[slug].tsx` → `{ slug: string }`), worked out by the type
 * checker from the name alone.
 */
import type { MiddlewareHandler } from "hono";
import type { ComponentType } from "react";

/** What middleware set for this request (`c.set("user", …)`), as handlers and pages read it. */
export type State = Record<string, unknown>;

/** A `_middleware.ts` export: Hono's own middleware, so `hono/basic-auth`, `hono/cors`, … work. */
export type Middleware = MiddlewareHandler;

export interface RenderInit {
  status?: number;
  headers?: HeadersInit;
}

/** The parameters of a route file: `docs/[...path].tsx` → `{ path: string }` (slashes kept). */
export type RouteParams<File extends string> = {
  [Name in ParamName<Segment<WithoutExtension<File>>>]: string;
};
type WithoutExtension<File> = File extends `${infer Path}.${"tsx" | "ts" | "jsx" | "js"}` ? Path
  : File;
type Segment<Path> = Path extends `${infer Head}/${infer Tail}` ? Head | Segment<Tail> : Path;
type ParamName<S> = S extends `[...${infer Name}]` ? Name : S extends `[${infer Name}]` ? Name
: never;

/** Parameters of a route whose file is not named to the type checker (see `defineRoute`). */
export type AnyParams = Record<string, string>;

declare const DATA: unique symbol;

/** A rendered page; its type remembers the data, so the page's props can be checked against it. */
export type PageResponse<Data> = Response & { readonly [DATA]?: Data };

/** `render(data)`: the data is required unless the page takes none. */
export type RenderArgs<Data> = undefined extends Data ? [data?: Data, init?: RenderInit]
  : [data: Data, init?: RenderInit];

export interface RouteContext<Data = unknown, Params = AnyParams> {
  /** Route parameters: `[slug]` → `params.slug`, `[...path]` → `params.path` (slashes kept). */
  params: Params;
  url: URL;
  /** What middleware set (`c.set(…)`) for this request. */
  state: State;
  /** Streams the page with `data`; the status is 200 unless `init` says otherwise. */
  render(...args: RenderArgs<Data>): Promise<PageResponse<Data>>;
}

export type Handler<Data = unknown, Params = AnyParams> = (
  req: Request,
  ctx: RouteContext<Data, Params>,
) => Response | Promise<Response>;

export const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type Method = typeof METHODS[number];

export type Handlers<Data = unknown, Params = AnyParams> = Partial<
  Record<Method, Handler<Data, Params>>
>;

export interface PageProps<Data = unknown, Params = AnyParams> {
  data: Data;
  params: Params;
  url: URL;
  state: State;
}

/**
 * The props of an `_error.tsx` page (and of `_404.tsx`): the request's page props, and the status
 * and message of the expected error it shows (`httpError(403, "Only members can see this board")`).
 *
 * @example
 * ```tsx
 * // routes/board/_error.tsx
 * import type { ErrorPageProps } from "../../lib/mod.ts";
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
export interface ErrorPageProps<Params = AnyParams> extends PageProps<undefined, Params> {
  /** The 4xx status the request is answered with. */
  status: number;
  /** The error's message: product text, shown as it is. */
  message: string;
}

export interface LayoutProps<Data = unknown, Params = AnyParams> extends PageProps<Data, Params> {
  /** The page (or the next layout in) to render inside this layout. */
  Component: ComponentType;
}

export type AppProps<Data = unknown> = LayoutProps<Data>;
