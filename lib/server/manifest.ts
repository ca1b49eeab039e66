// deno-lint-ignore-file no-explicit-any -- modules and actions are typed by their own authors
/**
 * @module
 * The shape of `_build/manifest.gen.ts`: every route, island and asset the build found, as static
 * imports so the app runs where the file system cannot be read (Deno Deploy).
 */
import type { ComponentType } from "react";
import type { CachePolicy } from "../cache/policy.ts";
import type { SettingsDeclaration } from "../settings/declare.ts";
import type { Jobs } from "../kv/jobs/define.ts";
import type { Roles } from "../auth/roles.ts";
import type { Handler, Handlers, Middleware } from "./types.ts";

/**
 * A route module as the manifest imports it: a page (the default export), a `handler`, or both.
 *
 * @example
 * ```tsx
 * import type { RouteModule } from "shell/server";
 *
 * const about: RouteModule = { default: () => <h1>About</h1> };
 * ```
 * @see docs/routing.md - A route module
 */
export interface RouteModule {
  /** The page. */
  default?: ComponentType<any>;
  /** The handlers, or one handler for every method. */
  handler?: Handlers<any, any, any> | Handler<any, any, any>;
  /**
   * Links to this page are prerendered as the pointer rests on them, not only prefetched
   * (docs/navigation.md): for pages cheap to render and likely to be opened.
   */
  prerender?: boolean;
  /** The page is rendered once and served from the shared page cache (docs/caching.md). */
  cache?: CachePolicy;
}

/**
 * A `_middleware.ts` module: one middleware or a list, run in order.
 *
 * @example
 * ```ts
 * import type { MiddlewareModule } from "shell/server";
 *
 * const noop: MiddlewareModule = { handler: async (_c, next) => await next() };
 * ```
 * @see docs/routing.md - Middleware
 */
export interface MiddlewareModule {
  /** The folder's middleware. */
  handler: Middleware | Middleware[];
}

/**
 * A module whose default export is a component: a layout, `_app`, `_404`, an island.
 *
 * @example
 * ```tsx
 * import type { ComponentModule } from "shell/server";
 *
 * const notFound: ComponentModule = { default: () => <h1>Page not found</h1> };
 * ```
 * @see docs/routing.md - Files and URLs
 */
export interface ComponentModule {
  /** The component. */
  default: ComponentType<any>;
}

/**
 * One route of the manifest: its file, its pattern, its module, and the layouts and middleware of
 * its folders, outermost first.
 *
 * @example
 * ```tsx
 * import type { ManifestRoute } from "shell/server";
 *
 * const route: ManifestRoute = {
 *   file: "blog/[slug].tsx",
 *   pattern: "/blog/:slug",
 *   name: "/blog/:slug",
 *   module: { default: ({ params }) => <h1>{params.slug}</h1> },
 *   layouts: [],
 *   middlewares: [],
 * };
 * ```
 * @see docs/routing.md - Files and URLs
 */
export interface ManifestRoute {
  /** The module's path below `routes/`. */
  file: string;
  /** For Hono's router: `/blog/:slug`, `/docs/:path{.+}`. */
  pattern: string;
  /** As it reads in logs and traces: `/blog/:slug`, `/docs/:path+`. */
  name: string;
  /** The route's module. */
  module: RouteModule;
  /** Outermost first. */
  layouts: ComponentModule[];
  /** Outermost first. */
  middlewares: MiddlewareModule[];
  /** The nearest `_error.tsx` up the route's folders, if any. */
  errorPage?: ErrorPageEntry;
}

/**
 * A folder of `routes/` with a `_middleware.ts` or an `_error.tsx` of its own, or the first below a
 * `(group)` that has one: a URL below it that no route answers meets its chain and its error page,
 * as a page of the folder would, before the not-found page. `_private` folders and those ending in
 * a `(group)` have no URL of their own.
 *
 * @example
 * ```ts
 * import type { ManifestFolder } from "shell/server";
 *
 * const admin: ManifestFolder = {
 *   folder: "admin",
 *   pattern: "/admin",
 *   middlewares: [{ handler: async (_c, next) => await next() }],
 * };
 * ```
 * @see docs/routing.md - Middleware
 */
export interface ManifestFolder {
  /** Its path below `routes/`. */
  folder: string;
  /** Its pages' URLs: `/teams/:team` for `teams/[team]`. */
  pattern: string;
  /** The chain of its folders, the root's first. */
  middlewares: MiddlewareModule[];
  /** The nearest `_error.tsx` up from the folder, if any. */
  errorPage?: ErrorPageEntry;
}

/**
 * An `_error.tsx` and the layouts it renders inside: its own folder's and those above.
 *
 * @example
 * ```ts
 * import type { ErrorPageEntry } from "shell/server";
 *
 * const boardErrors: ErrorPageEntry = {
 *   file: "board/_error.tsx",
 *   module: { default: ({ message }: { message: string }) => message },
 *   layouts: [],
 * };
 * ```
 * @see docs/routing.md - Error pages
 */
export interface ErrorPageEntry {
  /** Its path below `routes/`. */
  file: string;
  /** The `_error.tsx` module. */
  module: ComponentModule;
  /** Outermost first. */
  layouts: ComponentModule[];
}

/**
 * A browser entry point: its URL and the URLs of every chunk it imports, transitively (what a page
 * preloads).
 *
 * @example
 * ```ts
 * import type { Chunk } from "shell/server";
 *
 * const counter: Chunk = { entry: "/_app/Counter-3F2A.js", imports: ["/_app/chunk-9C1D.js"] };
 * ```
 * @see docs/islands.md
 */
export interface Chunk {
  /** The entry's URL, under `/_app/`. */
  entry: string;
  /** The chunks it imports, transitively. */
  imports: string[];
}

/**
 * The browser assets of one build, as URLs under `/_app/`.
 *
 * @example
 * ```ts
 * import type { Assets } from "shell/server";
 *
 * const assets: Assets = { boot: { entry: "/_app/boot-1A.js", imports: [] }, islands: {} };
 * ```
 * @see docs/islands.md
 */
export interface Assets {
  /** The island boot runtime. */
  boot: Chunk;
  /** Each island's chunk, by name. */
  islands: Record<string, Chunk>;
  /** The Sentry browser SDK, loaded after the page only when Sentry is configured. */
  sentry?: Chunk;
  /**
   * Every file the build wrote under `/_app/` (scripts, stylesheets, source maps; not their
   * compressed copies), by URL: what the app keeps in KV for tabs opened before the next deploy.
   */
  files?: string[];
}

/**
 * What `deno task build` writes to `_build/manifest.gen.ts`: every route, island, server action and
 * browser asset it found, as static imports so the app runs where the file system cannot be read
 * (Deno Deploy). `createApp` takes it.
 *
 * @example
 * ```ts
 * import { createApp, type Manifest } from "shell/server";
 * import built from "@/_build/manifest.gen.ts";
 *
 * const manifest: Manifest = built;
 * console.log(manifest.routes.map((route) => route.pattern));
 * const app = createApp(manifest, { root: Deno.cwd() });
 * ```
 * @see docs/routing.md - Files and URLs
 */
export interface Manifest {
  /** Names the build: the same sources give the same id (Sentry's default release). */
  buildId: string;
  /** The routes, most specific first. */
  routes: ManifestRoute[];
  /** `routes/_app.tsx`. */
  app?: ComponentModule;
  /** `routes/_404.tsx`. */
  notFound?: ComponentModule;
  /** Layouts and middleware of the `routes/` root, applied to the not-found page. */
  rootLayouts: ComponentModule[];
  /** The root's `_middleware.ts`, applied to the not-found page. */
  rootMiddlewares: MiddlewareModule[];
  /**
   * The folders below the root that an unknown URL meets the middleware of, most specific first.
   */
  folders: ManifestFolder[];
  /** The root's `_error.tsx`: for the not-found page's requests and those no route answers. */
  errorPage?: ErrorPageEntry;
  /** The islands, by name. */
  islands: { name: string; module: ComponentModule }[];
  /** The browser assets. */
  assets: Assets;
  /** Where the build wrote the browser assets, relative to the project root. */
  assetDir: string;
  /** The server actions. */
  actions: ManifestActions;
  /** The stylesheets the app's modules import; none when absent. */
  styles?: ManifestStyles;
  /** `routes/_settings.ts`: the product's settings (docs/settings.md). */
  settings?: SettingsDeclaration;
  /** `routes/_jobs.ts`: the product's background jobs (docs/data.md). */
  jobs?: Jobs;
  /** `routes/_roles.ts`: the product's roles (docs/users.md). */
  roles?: Roles;
  /**
   * The modules under `routes/` and `islands/` the build found (paths from the project root):
   * `createApp` warns when the project's differ, a file added or removed since the build.
   */
  sources?: readonly string[];
}

/**
 * The stylesheets the app imports (`import "./x.css"`, CSS modules, Tailwind), as URLs under
 * `/_app/`, each list in the order its stylesheets apply, computed by the build: a page links its
 * own list, and those of the islands it renders, in `<head>`.
 *
 * @example
 * ```ts
 * import type { ManifestStyles } from "shell/server";
 *
 * const styles: ManifestStyles = {
 *   pages: { "index.tsx": ["/_app/css/routes/app-5PQ2.css"] },
 *   notFound: ["/_app/css/routes/app-5PQ2.css"],
 *   errorPages: { "_error.tsx": ["/_app/css/routes/app-5PQ2.css"] },
 *   plain: ["/_app/css/routes/app-5PQ2.css"],
 *   islands: { Counter: ["/_app/css/islands/Counter.module-Z3K1.css"] },
 * };
 * ```
 * @see docs/styles.md
 */
export interface ManifestStyles {
  /**
   * Each page's, by route file (below `routes/`): `_app`'s, its layouts' (outermost first), its
   * own.
   */
  pages: Record<string, string[]>;
  /** The not-found page's: `_app`'s, the root layouts', `_404`'s. */
  notFound: string[];
  /** Each `_error.tsx`'s, by file (below `routes/`): `_app`'s, its layouts', its own. */
  errorPages: Record<string, string[]>;
  /**
   * The app's plain error page's, for a folder with no `_error.tsx`: `_app`'s, the root layouts'.
   */
  plain: string[];
  /** Each island's, by name, with those of the islands it renders itself. */
  islands: Record<string, string[]>;
}

/**
 * A server action: an async function exported by a `"use server"` module.
 *
 * @example
 * ```ts
 * import type { ActionFunction } from "shell/server";
 *
 * const ping: ActionFunction = async () => await Promise.resolve("pong");
 * ```
 * @see docs/actions.md
 */
export type ActionFunction = (...args: any[]) => Promise<unknown>;

/**
 * One server action of the manifest.
 *
 * @example
 * ```ts
 * import type { ActionEntry, Manifest } from "shell/server";
 *
 * const idOf = (manifest: Manifest, name: string): string | undefined =>
 *   manifest.actions.entries.find((entry: ActionEntry) => entry.name === name)?.id;
 * ```
 * @see docs/actions.md
 */
export interface ActionEntry {
  /** What the browser posts to: `/_action/<id>`. Stable across builds of the same code. */
  id: string;
  /** The export's name, for logs and traces. */
  name: string;
  /** The module it comes from, relative to the project root (server-side only). */
  file: string;
  /** The exported function. */
  action: ActionFunction;
  /** The `_middleware` chain of the module's folder (root first); the root's for `lib/`. */
  middlewares: MiddlewareModule[];
}

/**
 * The server actions (`"use server"` modules) and the build's key for signing form state.
 *
 * @example
 * ```ts
 * import type { ManifestActions } from "shell/server";
 *
 * const none: ManifestActions = { secret: "", entries: [] };
 * ```
 * @see docs/actions.md
 */
export interface ManifestActions {
  /** Signs the state a form posted without JavaScript carries back to its page. */
  secret: string;
  /** The actions. */
  entries: ActionEntry[];
}

/** A `_middleware.ts` module's handlers, as one list. */
export function middlewaresOf(module: MiddlewareModule): Middleware[] {
  return Array.isArray(module.handler) ? module.handler : [module.handler];
}
