// deno-lint-ignore-file no-explicit-any -- modules and actions are typed by their own authors
/**
 * @module
 * The shape of `_build/manifest.gen.ts`: every route, island and asset the build found, as static
 * imports so the app runs where the file system cannot be read (Deno Deploy).
 */
import type { ComponentType } from "react";
import type { Handler, Handlers, Middleware } from "./types.ts";

export interface RouteModule {
  default?: ComponentType<any>;
  handler?: Handlers<any, any> | Handler<any, any>;
}

export interface MiddlewareModule {
  handler: Middleware | Middleware[];
}

export interface ComponentModule {
  default: ComponentType<any>;
}

export interface ManifestRoute {
  file: string;
  /** For Hono's router: `/blog/:slug`, `/docs/:path{.+}`. */
  pattern: string;
  /** As it reads in logs and traces: `/blog/:slug`, `/docs/:path+`. */
  name: string;
  module: RouteModule;
  /** Outermost first. */
  layouts: ComponentModule[];
  middlewares: MiddlewareModule[];
  /** The nearest `_error.tsx` up the route's folders, if any. */
  errorPage?: ErrorPageEntry;
}

/** An `_error.tsx` and the layouts it renders inside: its own folder's and those above. */
export interface ErrorPageEntry {
  module: ComponentModule;
  /** Outermost first. */
  layouts: ComponentModule[];
}

/** A browser entry point: its URL and the URLs of every chunk it imports, transitively. */
export interface Chunk {
  entry: string;
  imports: string[];
}

/** Browser assets of one build, as URLs under `/_app/`. */
export interface Assets {
  /** The island boot runtime. */
  boot: Chunk;
  islands: Record<string, Chunk>;
  /** The Sentry browser SDK, loaded after the page only when Sentry is configured. */
  sentry?: Chunk;
}

export interface Manifest {
  /** Names the build: the same sources give the same id (Sentry's default release). */
  buildId: string;
  routes: ManifestRoute[];
  app?: ComponentModule;
  notFound?: ComponentModule;
  /** Layouts and middleware of the `routes/` root, applied to the not-found page. */
  rootLayouts: ComponentModule[];
  rootMiddlewares: MiddlewareModule[];
  /** The root's `_error.tsx`: for the not-found page's requests and those no route answers. */
  errorPage?: ErrorPageEntry;
  islands: { name: string; module: ComponentModule }[];
  assets: Assets;
  /** Where the build wrote the browser assets, relative to the project root. */
  assetDir: string;
  actions: ManifestActions;
}

export type ActionFunction = (...args: any[]) => Promise<unknown>;

export interface ActionEntry {
  id: string;
  /** The export's name, for logs and traces. */
  name: string;
  /** The module it comes from, relative to the project root (server-side only). */
  file: string;
  action: ActionFunction;
  /** The `_middleware` chain of the module's folder (root first); the root's for `lib/`. */
  middlewares: MiddlewareModule[];
}

/** The server actions (`"use server"` modules) and the build's key for signing form state. */
export interface ManifestActions {
  secret: string;
  entries: ActionEntry[];
}

/** A `_middleware.ts` module's handlers, as one list. */
export function middlewaresOf(module: MiddlewareModule): Middleware[] {
  return Array.isArray(module.handler) ? module.handler : [module.handler];
}
