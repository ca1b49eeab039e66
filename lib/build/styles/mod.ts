/**
 * @module
 * The stylesheets of a build: from the server's module graph, which stylesheets each page, layout,
 * `_app` and island imports (`plan.ts`); CSS modules scoped (`modules.ts`), Tailwind compiled
 * (`tailwind.ts`), each bundled to a hashed stylesheet (`bundle.ts`); the modules Deno loads in
 * their place and `deno.json`'s entries for them (`deno_json.ts`); and the manifest's lists - each
 * page's stylesheets (`_app`'s, its layouts' outermost first, its own) and each island's - so the
 * server does no work per request to know what a page links.
 */
import type { ManifestStyles } from "../../server/manifest.ts";
import type { ServerGraph } from "../graph.ts";
import { localAliases } from "../import_map.ts";
import { BuildProblem } from "../problem.ts";
import type { Scan } from "../scan.ts";
import { bundleStyles, type StyleBundle } from "./bundle.ts";
import { writeStyleModules } from "./deno_json.ts";
import { type CssModules, isCssModule } from "./modules.ts";
import { planStyles } from "./plan.ts";
import type { Tailwind } from "./tailwind.ts";

export interface StylesOptions {
  root: string;
  /** Where the stylesheets go, relative to the root (the build's assets). */
  outDir: string;
  dev: boolean;
  /** Write the stylesheets to disk, or only return them (`deno task dev` serves from memory). */
  write: boolean;
  graph: ServerGraph;
  scan: Scan;
  modules: CssModules;
  tailwind: Tailwind;
}

export interface Styles extends StyleBundle {
  manifest: ManifestStyles;
  /**
   * What the server renders from the stylesheets, but their URLs: which page and island imports
   * which, in what order, and the class names. An edit that leaves it alone needs no new page.
   */
  shape: string;
  /** `deno.json` as the build rewrote it, when it did (new stylesheets, or some gone). */
  config?: string;
}

export async function buildStyles(options: StylesOptions): Promise<Styles> {
  const { root, graph, scan, modules } = options;
  const plan = planStyles(root, graph, scan, await frameworkFiles(root));
  if (plan.problems.length > 0) throw new BuildProblem(plan.problems.join("\n"));

  // A sheet's own stylesheets, before it: those its classes compose from.
  const before = (sheet: string) => isCssModule(sheet) ? modules.get(sheet).dependencies : [];
  const withDependencies = (sheets: string[]) => {
    const ordered = new Set<string>();
    const add = (sheet: string) => {
      if (ordered.has(sheet)) return;
      for (const dependency of before(sheet)) add(dependency);
      ordered.add(sheet);
    };
    sheets.forEach(add);
    return [...ordered];
  };
  const sheets = withDependencies(plan.sheets).sort();
  const bundle = await bundleStyles({ ...options, sheets, scanned: plan.scanned });
  const classes = new Map(plan.sheets.map((sheet) => [
    sheet,
    isCssModule(sheet) ? modules.get(sheet).classes : undefined,
  ]));
  const config = await writeStyleModules(root, plan.keys, classes);

  const urls = (...owners: (string | undefined)[]) =>
    withDependencies(
      owners.flatMap((owner) => owner === undefined ? [] : plan.owners.get(owner) ?? []),
    ).map((sheet) => bundle.urls.get(sheet)!);
  const route = (file: string | undefined) => file && `routes/${file}`;
  const app = route(scan.app);
  return {
    ...bundle,
    shape: JSON.stringify([[...plan.owners], [...plan.keys], [...classes]]),
    config,
    manifest: {
      pages: Object.fromEntries(
        scan.routes.map((r) => [r.file, urls(app, ...r.layouts.map(route), route(r.file))]),
      ),
      notFound: urls(app, ...scan.rootLayouts.map(route), route(scan.notFound)),
      errorPages: Object.fromEntries(
        [scan.errorPage, ...[...scan.routes, ...scan.folders].map((r) => r.errorPage)].flatMap((
          page,
        ) => page ? [[page.file, urls(app, ...page.layouts.map(route), route(page.file))]] : []),
      ),
      plain: urls(app, ...scan.rootLayouts.map(route)),
      islands: Object.fromEntries([...scan.islands].map(([name, file]) => [name, urls(file)])),
    },
  };
}

/** The framework's entry modules (the `shell` aliases' targets): no app code is behind them. */
async function frameworkFiles(root: string): Promise<Set<string>> {
  const { exact } = await localAliases(root);
  return new Set(
    [...exact].filter(([key]) => key === "shell" || key.startsWith("shell/"))
      .map(([, target]) => target.replace(/^\.\//, "")),
  );
}
