/**
 * @module
 * What an app's modules import from the framework: `createApp` for entry points and tests, and for
 * routes, islands and actions the types, `defineRoute`, `notFound()`, `redirect()` and
 * `requestContext()`.
 */
export type {
  AnyParams,
  AppProps,
  Handler,
  Handlers,
  LayoutProps,
  Middleware,
  PageProps,
  PageResponse,
  RenderInit,
  RouteContext,
  RouteParams,
  State,
} from "./server/types.ts";
export { type App, createApp } from "./server/app.tsx";
export type { AppOptions } from "./server/options.ts";
export type { FailureLinks, Telemetry } from "./server/telemetry.ts";
export type { Manifest } from "./server/manifest.ts";
export { defineRoute } from "./server/define.ts";
export { requestContext } from "./server/context.ts";
export { bodyLimit } from "./server/bodies.ts";
export { notFound } from "./errors/not_found.ts";
export { redirect } from "./actions/redirect.ts";
