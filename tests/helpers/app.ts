// deno-lint-ignore-file no-explicit-any -- modules and actions are typed by their own authors
/**
 * @module
 * The app in this process, for tests that need no process boundary: `createApp` from the real
 * build of the framework's test app (`fixtureApp`: `tests/fixture/`, built by `builtFixture()`,
 * its modules loaded here — they import the framework through the import map, so they share this
 * process's `lib/`) or from modules held in memory (`memoryApp`, a manifest made here by the
 * build's own conventions), answered with Hono's `app.request()`, or served on a loopback port
 * (`serveApp`) when a real connection matters. Never the example app.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ComponentType } from "react";
import {
  assertUniquePatterns,
  compareRoutes,
  foldersOf,
  isRouteFile,
  nearestErrorPage,
  patternFor,
  routeName,
  specialFile,
  urlFolders,
} from "../../lib/build/conventions.ts";
import { type App, type AppOptions, createApp, type Manifest } from "../../lib/server.ts";
import type {
  ActionEntry,
  ActionFunction,
  ComponentModule,
  MiddlewareModule,
  RouteModule,
} from "../../lib/server/manifest.ts";
import type { SettingsDeclaration } from "../../lib/settings/declare.ts";
import type { Jobs } from "../../lib/kv/jobs/define.ts";
import type { Roles } from "../../lib/auth/roles.ts";
import { builtFixture } from "./built_copy.ts";
import { FIXTURE_ROOT } from "./project_copy.ts";

/** Options as a test gives them: the test app's root unless it says otherwise. */
export type TestOptions = Partial<AppOptions>;

/**
 * The KV store of the apps made here unless a test passes its own: in memory, one per test module,
 * opened as the module loads so that no test sees it as a resource it leaked.
 */
const memoryKv = await Deno.openKv(":memory:");

/** The built test app's root and manifest, loaded once per test module. */
let built: Promise<{ root: string; manifest: Manifest }> | undefined;

/** The root and the manifest of the built test app (`builtFixture()`), its modules loaded here. */
export function fixtureBuild(): Promise<{ root: string; manifest: Manifest }> {
  return built ??= (async () => {
    const root = await builtFixture();
    const url = pathToFileURL(join(root, "_build/manifest.gen.ts")).href;
    const { default: manifest } = await import(url);
    return { root, manifest };
  })();
}

/** The test app as `deno task build` leaves it, routes, islands, chunks and all. */
export async function fixtureApp(options: TestOptions = {}): Promise<App> {
  const { root, manifest } = await fixtureBuild();
  return createApp(manifest, { root, kv: memoryKv, ...options });
}

/** An app made of the modules in `files` (see `memoryManifest`), with the test app's `static/`. */
export function memoryApp(files: AppFiles, options: TestOptions = {}): App {
  return createApp(memoryManifest(files), { root: FIXTURE_ROOT, kv: memoryKv, ...options });
}

/** What `memoryManifest` makes an app from. */
export interface AppFiles {
  /**
   * Modules by their path below `routes/`, as the build would find them there: pages and API
   * routes, `_app`, `_404`, and each folder's `_layout`, `_middleware` and `_error`.
   */
  routes: Record<string, RouteModule | ComponentModule | MiddlewareModule>;
  /** `routes/_settings.ts`'s default export: the app's own settings (`defineSettings`). */
  settings?: SettingsDeclaration;
  /** `routes/_jobs.ts`'s default export: the app's background jobs (`defineJobs`). */
  jobs?: Jobs;
  /** `routes/_roles.ts`'s default export: the app's roles (`defineRoles`). */
  roles?: Roles;
  /** Island components by name; each gets a chunk URL (`/_app/Name.js`) no file stands behind. */
  islands?: Record<string, ComponentType<any>>;
  /**
   * `"use server"` modules by their path from the project root (`routes/admin/actions.ts`,
   * `lib/x.ts`): their exports. The path decides the `_middleware` chain, as in a build.
   */
  actions?: Record<string, Record<string, ActionFunction>>;
}

/**
 * A manifest made by hand from modules in memory, with the build's conventions
 * (`lib/build/conventions.ts`): each route's pattern, the most specific first, the layouts and
 * middleware of its folders, outermost first, and its nearest `_error`.
 */
export function memoryManifest(
  { routes, islands = {}, actions = {}, settings, jobs, roles }: AppFiles,
): Manifest {
  const layouts = new Map<string, ComponentModule>();
  const middlewares = new Map<string, MiddlewareModule>();
  const errors = new Map<string, ComponentModule>();
  const errorFiles = new Map<ComponentModule, string>();
  const errorPageOf = (file: string) => {
    const found = nearestErrorPage(errors, layouts, file);
    return found && { file: errorFiles.get(found.module)!, ...found };
  };
  let app: ComponentModule | undefined;
  let notFound: ComponentModule | undefined;
  const pages: { file: string; pattern: string; module: RouteModule }[] = [];
  for (const [file, module] of Object.entries(routes)) {
    const folder = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "";
    const special = specialFile(file);
    if (special === "_layout") layouts.set(folder, module as ComponentModule);
    else if (special === "_middleware") middlewares.set(folder, module as MiddlewareModule);
    else if (special === "_error") {
      errors.set(folder, module as ComponentModule);
      errorFiles.set(module as ComponentModule, file);
    } else if (special === "_app") app = module as ComponentModule;
    else if (special === "_404") notFound = module as ComponentModule;
    else if (isRouteFile(file)) {
      pages.push({ file, pattern: patternFor(file), module: module as RouteModule });
    } else throw new Error(`routes/${file} is neither a route nor a special file`);
  }
  pages.sort(compareRoutes);
  assertUniquePatterns(pages);
  const own = new Set([...middlewares.keys(), ...errors.keys()]);
  const chain = <T>(map: Map<string, T>, file: string) =>
    foldersOf(file).flatMap((folder) => map.get(folder) ?? []);
  // A file at the root of routes/ has the root's chain; a module outside routes/ too.
  const chainOf = (file: string) =>
    chain(middlewares, file.startsWith("routes/") ? file.slice("routes/".length) : "_404.tsx");

  const entries: ActionEntry[] = Object.entries(actions).flatMap(([file, exports]) =>
    Object.entries(exports).map(([name, action]) => ({
      id: actionIdOf(file, name),
      name,
      file,
      action,
      middlewares: chainOf(file),
    }))
  );
  return {
    buildId: "in-memory",
    routes: pages.map(({ file, pattern, module }) => ({
      file,
      pattern,
      name: routeName(pattern),
      module,
      layouts: chain(layouts, file),
      middlewares: chain(middlewares, file),
      errorPage: errorPageOf(file),
    })),
    app,
    notFound,
    settings,
    jobs,
    roles,
    rootLayouts: chain(layouts, "_404.tsx"),
    rootMiddlewares: chain(middlewares, "_404.tsx"),
    // A file in a folder has the folder's chain: `${folder}/_` stands for any.
    folders: urlFolders(Object.keys(routes), own).map(({ file, pattern }) => ({
      folder: file,
      pattern,
      middlewares: chain(middlewares, `${file}/_`),
      errorPage: errorPageOf(`${file}/_`),
    })),
    errorPage: errorPageOf("_404.tsx"),
    islands: Object.entries(islands).map(([name, component]) => ({
      name,
      module: { default: component },
    })),
    assets: {
      boot: { entry: "/_app/boot.js", imports: [] },
      islands: Object.fromEntries(
        Object.keys(islands).map((name) => [name, { entry: `/_app/${name}.js`, imports: [] }]),
      ),
    },
    // No build stands behind an app in memory: nothing to serve under /_app/.
    assetDir: "_build/in-memory",
    actions: { secret: "in-memory-secret", entries },
  };
}

/** The id `memoryManifest` gives the action `name` of the module `file`: stable, opaque. */
export function actionIdOf(file: string, name: string): string {
  return createHash("sha256").update(`${file}#${name}`).digest("base64url").slice(0, 20);
}

/** A server on a free loopback port, for what needs a real connection. */
export interface Served extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  /** `fetch` on the server, redirects not followed. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

export function serveApp(app: App): Served {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  const origin = `http://127.0.0.1:${server.addr.port}`;
  return {
    origin,
    port: server.addr.port,
    fetch: (path, init) => fetch(origin + path, { redirect: "manual", ...init }),
    async [Symbol.asyncDispose]() {
      await app.close();
      await server.shutdown();
    },
  };
}
