/**
 * @module
 * What route, layout and island modules import from the framework.
 */
export type {
  AppProps,
  Handler,
  Handlers,
  LayoutProps,
  Middleware,
  MiddlewareContext,
  PageProps,
  RenderInit,
  RouteContext,
  State,
} from "./types.ts";
export { notFound } from "./not_found.ts";
export { redirect } from "./actions/redirect.ts";
