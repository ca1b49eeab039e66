/**
 * @module
 * The project's own files a build is made from, found by following imports rather than folder
 * names, so a `components/` folder (or any other) counts as soon as a route, island or action
 * imports from it. The server's side is Deno's own module graph of the manifest (`deno info`,
 * resolved exactly as the server will resolve it); the browser's is what esbuild bundled. The build
 * records both (`sources.json`) for the start's freshness check (`fingerprint.ts`), and the dev
 * loop asks again after each build. Each module's imports, in the order written, are kept too: the
 * stylesheets a page links follow them (`styles/plan.ts`).
 */
import { join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const SOURCES_FILE = "sources.json";

/** What a build records of its sources: files of the project, by path from its root. */
export interface Sources {
  /** Every local module the manifest's graph reached (`ServerGraph.server`). */
  server: string[];
  /** Every local module the browser build bundled. */
  browser: string[];
}

interface Resolved {
  specifier: string;
  span: { start: { line: number; character: number } };
}

interface ModuleInfo {
  specifier: string;
  /** In the order the module writes them (deno_graph keeps it). */
  dependencies?: { specifier: string; code?: Resolved; type?: Resolved }[];
  /** Why it could not be loaded: `Module not found "file:///..."`, a syntax error. */
  error?: string;
}

/** Deno's module graph of the manifest, as files of the project. */
export interface ServerGraph {
  /**
   * Every local module it reaches (routes, layouts, middleware, islands, actions, and what they
   * import, types included).
   */
  server: string[];
  /**
   * Those reached without going through an island: what a page renders on the server itself. An
   * edit to one of them changes the page's HTML, not only an island's.
   */
  pages: string[];
  /** `routes/x.tsx:1:20: Module not found "./nope.ts"`, one per import of a missing file. */
  unresolved: string[];
  /** Each local module's imports of code (not of types only), in the order written. */
  imports: Map<string, LocalImport[]>;
}

/** One import of code in a module of the project. */
export interface LocalImport {
  /** As written: `"./card.module.css"`, `"@/components/Card.tsx"`, `"react"`. */
  specifier: string;
  /**
   * The file it resolves to, by path from the root (`../x.css` above it); none for a package, a
   * built-in or a URL.
   */
  path?: string;
  /** Where it is written: `routes/x.tsx:3:8`. */
  at: string;
}

/** A graph of nothing: before the first build. */
export function emptyGraph(): ServerGraph {
  return { server: [], pages: [], unresolved: [], imports: new Map() };
}

/**
 * The graph of the manifest (or a module of the same imports) at `module`, whose island modules
 * (paths from the root) are where `pages` stops.
 */
export async function serverSources(
  root: string,
  module: string,
  islands: Iterable<string>,
): Promise<ServerGraph> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", join(root, "deno.json"), module],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (code !== 0) throw new Error(`deno info ${module}: ${new TextDecoder().decode(stderr)}`);
  const { modules, roots }: { modules: ModuleInfo[]; roots: string[] } = JSON.parse(
    new TextDecoder().decode(stdout),
  );
  const local = localPaths(root);
  const imports = new Map(modules.map((module) => [
    module.specifier,
    (module.dependencies ?? []).flatMap((dep) =>
      [dep.code?.specifier, dep.type?.specifier].filter((s): s is string => !!s)
    ),
  ]));
  const reached = (stopAt: Set<string>) => {
    const seen = new Set<string>();
    const visit = (specifier: string) => {
      if (seen.has(specifier) || stopAt.has(specifier)) return;
      seen.add(specifier);
      for (const next of imports.get(specifier) ?? []) visit(next);
    };
    for (const specifier of roots) visit(specifier);
    return local([...seen].filter((specifier) => !roots.includes(specifier)));
  };
  const islandUrls = new Set([...islands].map((file) => pathToFileURL(join(root, file)).href));
  return {
    server: reached(new Set()),
    pages: reached(islandUrls),
    unresolved: unresolvedImports(modules, local),
    imports: localImports(root, modules, local),
  };
}

function localImports(
  root: string,
  modules: ModuleInfo[],
  local: (specifiers: string[]) => string[],
): Map<string, LocalImport[]> {
  const imports = new Map<string, LocalImport[]>();
  for (const module of modules) {
    const [importer] = local([module.specifier]);
    if (!importer) continue;
    imports.set(
      importer,
      (module.dependencies ?? []).flatMap(({ specifier, code }) => {
        if (!code) return [];
        const { line, character } = code.span.start;
        const at = `${importer}:${line + 1}:${character + 1}`;
        return [{ specifier, path: pathOf(root, code.specifier), at }];
      }),
    );
  }
  return imports;
}

/** A `file:` URL as a path from the root; undefined for anything else. */
function pathOf(root: string, specifier: string): string | undefined {
  if (!specifier.startsWith("file:")) return undefined;
  return relative(root, fileURLToPath(specifier)).split(sep).join("/");
}

/** A stylesheet: Deno cannot load it, the build maps it to a module (`styles/`). */
export function isStylesheet(specifier: string): boolean {
  return /\.css$/i.test(specifier);
}

/** Each import, in a module of the project, of a local file that is not there. */
function unresolvedImports(modules: ModuleInfo[], local: (specifiers: string[]) => string[]) {
  const missing = new Set(
    modules.filter((module) => module.error?.startsWith("Module not found"))
      .map((module) => module.specifier)
      .filter((specifier) => specifier.startsWith("file:")),
  );
  return modules.flatMap((module) => {
    const [importer] = local([module.specifier]);
    if (!importer) return [];
    return (module.dependencies ?? []).flatMap((dep) => {
      // The build checks its stylesheets itself: Deno may not find the module one maps to yet.
      if (isStylesheet(dep.specifier)) return [];
      const to = [dep.code, dep.type].find((resolved) =>
        resolved && missing.has(resolved.specifier)
      );
      if (!to) return [];
      const { line, character } = to.span.start;
      return [`${importer}:${line + 1}:${character + 1}: Module not found "${dep.specifier}"`];
    });
  });
}

/** The project's own files among esbuild's inputs (paths from the root; packages and stubs out). */
export function browserSources(inputs: Iterable<string>): string[] {
  return [...inputs].filter((input) => !input.includes(":") && !isOutside(input)).sort();
}

/** Keeps the `file:` specifiers under `root` but outside the folders that are not sources. */
function localPaths(root: string) {
  return (specifiers: string[]): string[] =>
    specifiers.flatMap((specifier) => {
      const path = pathOf(root, specifier);
      return path === undefined || isOutside(path) ? [] : [path];
    }).sort();
}

/** Not the project's sources: above the root, packages, the build's own output. */
function isOutside(path: string): boolean {
  return path.startsWith("../") || path.startsWith("/") || /^(node_modules|_build)\//.test(path);
}
