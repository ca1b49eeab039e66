/**
 * @module
 * The public types a route, layout, middleware or `_app` module is written against.
 */
import type { ComponentType } from "react";

/** Per-request values shared by middleware, handlers and pages. */
export type State = Record<string, unknown>;

export interface RenderInit {
  status?: number;
  headers?: HeadersInit;
}

export interface RouteContext<Data = unknown> {
  /** Route parameters: `[slug]` → `params.slug`, `[...path]` → `params.path` (slashes kept). */
  params: Record<string, string>;
  url: URL;
  state: State;
  /** Streams the page with `data`; the status is 200 unless `init` says otherwise. */
  render(data?: Data, init?: RenderInit): Promise<Response>;
}

export type Handler<Data = unknown> = (
  req: Request,
  ctx: RouteContext<Data>,
) => Response | Promise<Response>;

export type Handlers<Data = unknown> = Partial<Record<Method, Handler<Data>>>;

export const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type Method = typeof METHODS[number];

export interface PageProps<Data = unknown> {
  data: Data;
  params: Record<string, string>;
  url: URL;
  state: State;
}

export interface LayoutProps<Data = unknown> extends PageProps<Data> {
  /** The page (or the next layout in) to render inside this layout. */
  Component: ComponentType;
}

export type AppProps<Data = unknown> = LayoutProps<Data>;

export interface MiddlewareContext {
  params: Record<string, string>;
  url: URL;
  state: State;
  /** Runs the next middleware, or the route itself. */
  next(): Promise<Response>;
}

export type Middleware = (req: Request, ctx: MiddlewareContext) => Response | Promise<Response>;
