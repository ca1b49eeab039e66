/**
 * @module
 * Finds what the build turns into a manifest: the files under `routes/` (by the conventions in
 * `routes.ts`) and the islands, `islands/*.tsx`.
 */
import { join, relative, sep } from "node:path";
import {
  assertUniquePatterns,
  compareRoutes,
  foldersOf,
  isRouteFile,
  patternFor,
  type RouteFile,
  specialFile,
} from "../routes.ts";

export interface ScannedRoute extends RouteFile {
  /** Layout and middleware files that apply, outermost first (paths relative to routes/). */
  layouts: string[];
  middlewares: string[];
}

export interface Scan {
  routes: ScannedRoute[];
  app?: string;
  notFound?: string;
  rootLayouts: string[];
  rootMiddlewares: string[];
  /** Island name → path relative to the project root. */
  islands: Map<string, string>;
}

const ISLAND_NAME = /^[A-Z][A-Za-z0-9]*$/;

async function walk(dir: string): Promise<string[]> {
  const files: string[] = [];
  const visit = async (folder: string) => {
    for await (const entry of Deno.readDir(folder)) {
      const path = join(folder, entry.name);
      if (entry.isDirectory) await visit(path);
      else if (entry.isFile) files.push(relative(dir, path).split(sep).join("/"));
    }
  };
  try {
    await visit(dir);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return files.sort();
}

export async function scan(root: string): Promise<Scan> {
  const files = await walk(join(root, "routes"));
  const layouts = new Map<string, string>();
  const middlewares = new Map<string, string>();
  let app: string | undefined;
  let notFound: string | undefined;
  const routeFiles: RouteFile[] = [];

  for (const file of files) {
    const folder = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "";
    const special = specialFile(file);
    if (special === "_layout") layouts.set(folder, file);
    else if (special === "_middleware") middlewares.set(folder, file);
    else if (special === "_app" || special === "_404") {
      if (folder !== "") {
        throw new Error(`routes/${file}: ${special} belongs at the root of routes/`);
      }
      if (special === "_app") app = file;
      else notFound = file;
    } else if (isRouteFile(file)) routeFiles.push({ file, pattern: patternFor(file) });
  }

  routeFiles.sort(compareRoutes);
  assertUniquePatterns(routeFiles);
  const chain = (map: Map<string, string>, file: string) =>
    foldersOf(file).flatMap((folder) => map.get(folder) ?? []);
  const routes = routeFiles.map((route) => ({
    ...route,
    layouts: chain(layouts, route.file),
    middlewares: chain(middlewares, route.file),
  }));

  const islands = new Map<string, string>();
  for await (const entry of readDirIfAny(join(root, "islands"))) {
    if (!entry.isFile || !/\.(tsx|jsx)$/.test(entry.name)) continue;
    const name = entry.name.replace(/\.(tsx|jsx)$/, "");
    if (!ISLAND_NAME.test(name)) {
      throw new Error(
        `islands/${entry.name}: an island's file name is its component's (PascalCase)`,
      );
    }
    islands.set(name, `islands/${entry.name}`);
  }

  return {
    routes,
    app,
    notFound,
    rootLayouts: chain(layouts, "_404.tsx"),
    rootMiddlewares: chain(middlewares, "_404.tsx"),
    islands: new Map([...islands].sort()),
  };
}

async function* readDirIfAny(dir: string): AsyncIterable<Deno.DirEntry> {
  try {
    yield* Deno.readDir(dir);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}
