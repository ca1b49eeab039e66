/**
 * What routes, layouts, `_app`, `_middleware.ts` files, handlers and server actions import:
 * `import { ... } from "shell"`. The types a route module is written against,
 * `createDefine<State>()` for the app's typed state and `defineRoute` for typed routes,
 * `httpError()`, `notFound()` and `redirect()` to end a request, `requestContext()` in server
 * actions and `formOf()` for the form one was sent, `bodyLimit()` for a folder's uploads,
 * `clientAddress()`, `eventStream()`, `isSpeculative()` to tell a browser's prefetch from a visit,
 * the `CachePolicy` a route exports as `cache` and `revalidateTag()` that drops its stored pages,
 * and `defineSettings()` (with `secret()`) for the product's own settings in `routes/_settings.ts`,
 * read by a page's server components with `useSettings()`.
 *
 * The other entry points: `shell/runtime` for islands (browser-safe), `shell/data` for Deno KV,
 * `shell/auth` for users, sessions and roles, `shell/server` for entry points and plugins
 * (`createApp`).
 *
 * @example
 * ```tsx
 * // routes/blog/[slug].tsx
 * import { defineRoute, notFound } from "shell";
 *
 * const POSTS = new Map([["hello-world", "Hello, world"]]);
 *
 * export const handler = defineRoute("blog/[slug].tsx").handlers<string>({
 *   GET(_req, ctx) {
 *     const title = POSTS.get(ctx.params.slug); // ctx.params is { slug: string }
 *     if (title === undefined) throw notFound();
 *     return ctx.render(title);
 *   },
 * });
 *
 * export default defineRoute("blog/[slug].tsx").page<typeof handler>(({ data }) => <h1>{data}</h1>);
 * ```
 * @see docs/routing.md
 * @module
 */
export type {
  AnyParams,
  AppProps,
  Context,
  ErrorPageProps,
  Handler,
  Handlers,
  LayoutProps,
  Method,
  Middleware,
  PageProps,
  PageResponse,
  RenderInit,
  RouteContext,
  RouteParams,
  State,
  StateContext,
  StateMiddleware,
} from "./server/types.ts";
export type { AnyContext } from "./server/scope.ts";
export { createDefine, type Define, defineRoute, type RouteDefinition } from "./server/define.ts";
export { requestContext } from "./server/context.ts";
export { bodyLimit } from "./server/bodies.ts";
export {
  type ClientErrorStatus,
  HttpError,
  httpError,
  type HttpErrorInit,
  isHttpError,
  notFound,
} from "./shared/http_error.ts";
export { clientAddress } from "./server/client.ts";
export { eventStream, type EventStreamOptions, type ServerEvent } from "./server/event_stream.ts";
export { isSpeculative } from "./server/speculation.ts";
export { redirect, type RedirectStatus } from "./actions/redirect.ts";
export { formOf } from "./actions/input.ts";
export type { CachePolicy, TagSource } from "./cache/policy.ts";
export { revalidateTag } from "./cache/revalidate.ts";
export {
  defineSettings,
  type SettingsDeclaration,
  type SettingValues,
} from "./settings/declare.ts";
export { secret, type SettingSchema } from "./settings/read.ts";
export { useSettings } from "./settings/use.ts";
