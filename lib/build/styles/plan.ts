/**
 * @module
 * Which stylesheets the app imports, read from the server's module graph (`../graph.ts`): every
 * `import "./x.css"` and `import styles from "./x.module.css"` in a module that a route, a layout,
 * `_app`, `_404` or an island reaches, in any folder. For each of those modules, the stylesheets it
 * brings, in the order the browser must apply them - the order the imports are evaluated: depth
 * first, each module's imports as written. A page's own list stops at islands (an island's are
 * linked where it renders); an island's goes through the islands it renders itself. Also the
 * import-map key each import needs (`deno.json`, see `deno_json.ts`) and the modules Tailwind
 * scans: those the app reaches, without the framework's own (behind the `shell` aliases).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { isStylesheet, type LocalImport, type ServerGraph } from "../graph.ts";
import type { Scan } from "../scan.ts";

/** Where the build writes the module that stands for each stylesheet on the server. */
export const MODULES_DIR = "_build/css";

export interface StylePlan {
  /** Every stylesheet a module imports, by path from the root, sorted. */
  sheets: string[];
  /** Each import-map key the imports need (`./routes/x.css`, `@/x.css`) -> its stylesheet. */
  keys: Map<string, string>;
  /** Each route, layout, `_app`, `_404` and island file -> its stylesheets, in cascade order. */
  owners: Map<string, string[]>;
  /** The modules Tailwind scans for class names: what the app reaches, the framework left out. */
  scanned: string[];
  /** `routes/x.tsx:1:8: ...`, one per import that cannot be built. */
  problems: string[];
}

/**
 * The plan for `graph`, whose modules import the framework through `frameworkFiles` (the targets
 * of the `shell` aliases).
 */
export function planStyles(
  root: string,
  graph: ServerGraph,
  scan: Scan,
  frameworkFiles: Set<string>,
): StylePlan {
  const keys = new Map<string, string>();
  const problems: string[] = [];
  /** The stylesheet an import names, if it names one that can be built. */
  const sheetOf = (found: LocalImport): string | undefined => {
    const sheet = found.path?.startsWith(`${MODULES_DIR}/`)
      ? found.path.slice(MODULES_DIR.length + 1, -".ts".length)
      : found.path;
    const quoted = JSON.stringify(found.specifier);
    if (sheet === undefined || sheet.startsWith("node_modules/")) {
      problems.push(
        `${found.at}: ${quoted} is a package's stylesheet: @import it from a stylesheet of yours`,
      );
    } else if (sheet.startsWith("../") || sheet.startsWith("/")) {
      problems.push(`${found.at}: ${quoted} is outside the project`);
    } else if (!existsSync(join(root, sheet))) {
      problems.push(`${found.at}: Module not found ${quoted}`);
    } else {
      keys.set(isBare(found.specifier) ? found.specifier : `./${sheet}`, sheet);
      return sheet;
    }
  };

  const islands = new Set(scan.islands.values());
  const pageOwners = [
    ...new Set([
      scan.app,
      scan.notFound,
      ...scan.rootLayouts,
      ...scan.routes.flatMap((route) => [...route.layouts, route.file]),
      ...[scan.errorPage, ...[...scan.routes, ...scan.folders].map((entry) => entry.errorPage)]
        .flatMap((page) => page ? [...page.layouts, page.file] : []),
    ]),
  ].flatMap((file) => file === undefined ? [] : [`routes/${file}`]);
  const owners = new Map<string, string[]>();
  const scanned = new Set<string>();
  const walk = (owner: string, stopAt: Set<string>) => {
    const sheets: string[] = [];
    const seen = new Set<string>();
    const visit = (module: string) => {
      if (seen.has(module) || frameworkFiles.has(module)) return;
      seen.add(module);
      scanned.add(module);
      for (const found of graph.imports.get(module) ?? []) {
        if (isStylesheet(found.specifier)) {
          const sheet = sheetOf(found);
          if (sheet !== undefined && !sheets.includes(sheet)) sheets.push(sheet);
        } else if (found.path !== undefined && !stopAt.has(found.path)) visit(found.path);
      }
    };
    visit(owner);
    owners.set(owner, sheets);
  };
  for (const owner of pageOwners) walk(owner, islands);
  for (const island of islands) walk(island, new Set());
  // Every import of a stylesheet needs its key, whichever module makes it (a middleware, say).
  for (const found of [...graph.imports.values()].flat()) {
    if (isStylesheet(found.specifier)) sheetOf(found);
  }

  return {
    sheets: [...new Set(keys.values())].sort(),
    keys,
    owners,
    scanned: [...scanned].filter((file) =>
      !isStylesheet(file) && !/^(\.\.\/|\/|node_modules\/|_build\/)/.test(file)
    ).sort(),
    problems: [...new Set(problems)],
  };
}

/** A bare specifier goes through the import map as written; any other, as the file it names. */
function isBare(specifier: string): boolean {
  return !/^(\.{0,2}\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);
}
