/**
 * @module
 * The build: scan `routes/` and `islands/`, bundle the browser side (and, for production, give its
 * scripts Sentry debug IDs and compress them), write the manifest, the local files both sides'
 * module graphs reached (`graph.ts`) and the fingerprint of the sources it was made from. Production builds into `_build/`, development into `_build/dev/`, so
 * neither disturbs a server of the other. The
 * assets of the last few builds stay on disk: a server still running an earlier build (while
 * `deno task build` or the tests build beside it) keeps every chunk its pages name.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ActionModule, scanActions } from "./actions.ts";
import { bundle } from "./bundle.ts";
import { filesBelow } from "./files.ts";
import { buildDir, fingerprint, ignoreNotFound } from "./fingerprint.ts";
import { browserSources, serverSources, type Sources, SOURCES_FILE } from "./graph.ts";
import { manifestSource } from "./manifest_file.ts";
import { injectDebugIds } from "./debug_ids.ts";
import { precompress } from "./precompress.ts";
import { BuildProblem, isBuildFailure, problemOf } from "./problem.ts";
import { type Scan, scan } from "./scan.ts";

export interface BuildOptions {
  root: string;
  dev: boolean;
}

/** How many builds' assets are kept. */
const KEPT_BUILDS = 3;

/**
 * Builds into `_build/` (or `_build/dev/`). A mistake in the project's files — esbuild's errors
 * among them, and imports of files that are not there — throws a `BuildProblem`.
 */
export async function build(options: BuildOptions): Promise<void> {
  try {
    await buildNow(options);
  } catch (error) {
    throw isBuildFailure(error) ? problemOf(error.errors) : error;
  }
}

async function buildNow({ root, dev }: BuildOptions): Promise<void> {
  const outDir = buildDir(dev);
  const assetDir = `${outDir}/static`;
  const { scan: found, actions } = await scanProject(root);
  await mkdir(join(root, assetDir), { recursive: true });
  const bundled = await bundle({ root, outDir: assetDir, islands: found.islands, actions, dev });
  const files = bundled.files;
  if (!dev) {
    await injectDebugIds(join(root, assetDir), files);
    files.push(...await precompress(join(root, assetDir), files));
  }
  await keepRecentAssets(join(root, outDir), files);

  const manifest = (buildId: string) =>
    manifestSource({ scan: found, assets: bundled.assets, assetDir, actions, buildId, outDir });
  const { server, unresolved } = await serverGraphOf(
    root,
    outDir,
    manifest(""),
    found.islands.values(),
  );
  if (unresolved.length > 0) throw new BuildProblem(unresolved.join("\n"));
  const sources: Sources = { server, browser: browserSources(Object.keys(bundled.inputs)) };
  const print = await fingerprint(root, dev, sources);
  await writeFile(join(root, outDir, "manifest.gen.ts"), manifest(print.slice(0, 12)));
  // Outside the served folder: what reached the browser bundle, for the test that keeps
  // server-only modules out of it.
  await writeFile(join(root, outDir, "browser-inputs.json"), JSON.stringify(bundled.inputs));
  await writeFile(join(root, outDir, SOURCES_FILE), JSON.stringify(sources));
  await writeFile(join(root, outDir, "fingerprint"), print);
}

/**
 * The server's graph of a manifest (`source`), read from a copy of it beside the real one — same
 * imports, same folder — since the real one names the build by a hash of the graph.
 */
async function serverGraphOf(
  root: string,
  outDir: string,
  source: string,
  islands: Iterable<string>,
) {
  const module = join(root, outDir, `graph-${crypto.randomUUID()}.gen.ts`);
  await writeFile(module, source);
  try {
    return await serverSources(root, module, islands);
  } finally {
    await rm(module);
  }
}

/** What the manifest lists: routes and islands, and the server actions. */
export async function scanProject(root: string): Promise<{ scan: Scan; actions: ActionModule[] }> {
  const found = await scan(root);
  const actions = await scanActions(root);
  // A "use server" module under routes/ holds actions, not a route.
  found.routes = found.routes.filter((r) => !actions.some((a) => a.file === `routes/${r.file}`));
  return { scan: found, actions };
}

/** Deletes the assets that none of the last `KEPT_BUILDS` builds wrote. */
async function keepRecentAssets(outDir: string, files: string[]): Promise<void> {
  const history = join(outDir, "builds.json");
  const earlier: string[][] = JSON.parse(
    await readFile(history, "utf8").catch(ignoreNotFound) ?? "[]",
  );
  const recent = [files, ...earlier].slice(0, KEPT_BUILDS);
  const kept = new Set(recent.flat());
  const assets = join(outDir, "static");
  for (const file of await filesBelow(assets)) {
    if (!kept.has(file)) await rm(join(assets, file));
  }
  await writeFile(history, JSON.stringify(recent));
}
