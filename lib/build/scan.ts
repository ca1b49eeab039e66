/**
 * @module
 * Finds what the build turns into a manifest: the files under `routes/` (by the conventions in
 * `conventions.ts`: each route with its folders' layouts, middleware and nearest `_error.tsx`) and
 * the islands, `islands/*.tsx`.
 */
import { join } from "node:path";
import {
  assertUniquePatterns,
  compareRoutes,
  foldersOf,
  isRouteFile,
  nearestErrorPage,
  patternFor,
  type RouteFile,
  specialFile,
  urlFolders,
} from "./conventions.ts";
import { filesBelow } from "./files.ts";
import { sourceModules } from "../server/build_sources.ts";
import { BuildProblem } from "./problem.ts";

export interface ScannedRoute extends RouteFile {
  /** Layout and middleware files that apply, outermost first (paths relative to routes/). */
  layouts: string[];
  middlewares: string[];
  /** The nearest `_error.tsx` and the layouts around it. */
  errorPage?: ScannedErrorPage;
}

/**
 * A folder with a `_middleware.ts` or an `_error.tsx` of its own (or the first below a `(group)`
 * with one), for the unknown URLs in it.
 */
export interface ScannedFolder {
  /** Its path below `routes/`. */
  folder: string;
  /** Its pages' URL pattern. */
  pattern: string;
  /** Its middleware chain, root first (paths relative to routes/). */
  middlewares: string[];
  /** The nearest `_error.tsx` up from it. */
  errorPage?: ScannedErrorPage;
}

export interface ScannedErrorPage {
  file: string;
  layouts: string[];
}

export interface Scan {
  routes: ScannedRoute[];
  app?: string;
  notFound?: string;
  /** `_settings.ts`: the product's settings. */
  settings?: string;
  /** `_jobs.ts`: the product's background jobs. */
  jobs?: string;
  /** `_roles.ts`: the product's roles. */
  roles?: string;
  rootLayouts: string[];
  rootMiddlewares: string[];
  /** The URL folders below the root with middleware or an error page of their own. */
  folders: ScannedFolder[];
  /** The root's `_error.tsx`, for not-found and what no route answers. */
  errorPage?: ScannedErrorPage;
  /** A module's middleware chain (its path from the project root): its folders' below `routes/`,
   * the root's for anything else (an action module under `lib/`). */
  middlewaresFor(file: string): string[];
  /** Island name -> path relative to the project root. */
  islands: Map<string, string>;
  /**
   * The modules under `routes/` and `islands/` when it ran (paths from the project root): the
   * manifest keeps them, so an app made from it can tell a file added or removed since.
   */
  sources: string[];
}

const ISLAND_NAME = /^[A-Z][A-Za-z0-9]*$/;

export async function scan(root: string): Promise<Scan> {
  const files = await filesBelow(join(root, "routes"));
  const layouts = new Map<string, string>();
  const middlewares = new Map<string, string>();
  const errors = new Map<string, string>();
  let app: string | undefined;
  let notFound: string | undefined;
  let settings: string | undefined;
  let jobs: string | undefined;
  let roles: string | undefined;
  const routeFiles: RouteFile[] = [];

  for (const file of files) {
    const folder = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "";
    const special = specialFile(file);
    if (special === "_layout") layouts.set(folder, file);
    else if (special === "_middleware") middlewares.set(folder, file);
    else if (special === "_error") errors.set(folder, file);
    else if (
      special === "_app" || special === "_404" || special === "_settings" ||
      special === "_jobs" || special === "_roles"
    ) {
      if (folder !== "") {
        throw new BuildProblem(`routes/${file}: ${special} belongs at the root of routes/`);
      }
      if (special === "_app") app = file;
      else if (special === "_404") notFound = file;
      else if (special === "_settings") settings = file;
      else if (special === "_roles") roles = file;
      else jobs = file;
    } else if (isRouteFile(file)) routeFiles.push({ file, pattern: patternFor(file) });
  }

  routeFiles.sort(compareRoutes);
  assertUniquePatterns(routeFiles);
  const chain = (map: Map<string, string>, file: string) =>
    foldersOf(file).flatMap((folder) => map.get(folder) ?? []);
  const errorPageOf = (file: string) => {
    const found = nearestErrorPage(errors, layouts, file);
    return found && { file: found.module, layouts: found.layouts };
  };
  const routes = routeFiles.map((route) => ({
    ...route,
    layouts: chain(layouts, route.file),
    middlewares: chain(middlewares, route.file),
    errorPage: errorPageOf(route.file),
  }));

  // A file in a folder has the folder's chain: `${folder}/_` stands for any.
  const own = new Set([...middlewares.keys(), ...errors.keys()]);
  const folders = urlFolders(files, own).map(({ file, pattern }) => ({
    folder: file,
    pattern,
    middlewares: chain(middlewares, `${file}/_`),
    errorPage: errorPageOf(`${file}/_`),
  }));

  const islands = new Map<string, string>();
  const islandFiles = await filesBelow(join(root, "islands"));
  for (const file of islandFiles) {
    if (file.includes("/") || !/\.(tsx|jsx)$/.test(file)) continue;
    const name = file.replace(/\.(tsx|jsx)$/, "");
    if (!ISLAND_NAME.test(name)) {
      throw new BuildProblem(
        `islands/${file}: an island's file name is its component's (PascalCase)`,
      );
    }
    islands.set(name, `islands/${file}`);
  }

  // A file at the root of routes/ has the root's chain.
  const atRoot = "_404.tsx";
  return {
    routes,
    app,
    notFound,
    settings,
    jobs,
    roles,
    rootLayouts: chain(layouts, atRoot),
    rootMiddlewares: chain(middlewares, atRoot),
    folders,
    errorPage: errorPageOf(atRoot),
    middlewaresFor: (file) =>
      chain(middlewares, file.startsWith("routes/") ? file.slice("routes/".length) : atRoot),
    islands,
    sources: sourceModules(files, islandFiles),
  };
}
