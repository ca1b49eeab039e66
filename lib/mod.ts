/**
 * @module
 * What an app's modules import from the framework: `createApp` for entry points and tests, and for
 * routes, islands and actions the types, `defineRoute`, `httpError()` and `notFound()` (expected
 * errors, docs/failures.md), `redirect()` and `requestContext()`; for data, the KV store (`kvOf`), logs with live feeds, rate limits and event
 * streams (see docs/data.md).
 */
export type {
  AnyParams,
  AppProps,
  ErrorPageProps,
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
export {
  HttpError,
  httpError,
  type HttpErrorInit,
  isHttpError,
  notFound,
} from "./errors/http_error.ts";
export { redirect } from "./actions/redirect.ts";
export { kvOf } from "./kv/access.ts";
export { KvBusyError } from "./kv/commit.ts";
export { after, append, type KvLog, kvLog, type Logged, newest } from "./kv/log.ts";
export { type Feed, feedOf, sinceOf } from "./kv/feed.ts";
export { assertFits, KvLimitError, MAX_KEY_BYTES, MAX_VALUE_BYTES } from "./kv/limits.ts";
export { limitCalls, rateLimit } from "./kv/rate_limit.ts";
export { clientAddress } from "./server/client.ts";
export { eventStream, type ServerEvent } from "./server/event_stream.ts";
