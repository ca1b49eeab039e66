/**
 * @module
 * The build: scan `routes/` and `islands/`, read the server's module graph (`graph.ts`), bundle
 * the browser side - scripts, and the stylesheets the app imports (`styles/`) - (for production,
 * give the scripts Sentry debug IDs and compress both, and bundle the server's Sentry SDK:
 * `sentry_server_sdk.ts`), write the manifest (for production, and the server bundled with it:
 * `server_bundle.ts`), the local files both
 * sides' module graphs reached and the fingerprint of the sources it was made from. Production
 * builds into `_build/`, development into `_build/dev/`, so neither disturbs a server of the other
 * (the modules standing for stylesheets, `_build/css/`, are the same for both). The assets of the
 * last few builds stay on disk: a server still running an earlier build (while `deno task build`
 * or the tests build beside it) keeps every chunk its pages name.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Assets, ManifestStyles } from "../server/manifest.ts";
import { lessGuardedActions, paramlessGuards } from "./action_guards.ts";
import { type ActionModule, scanActions } from "./actions.ts";
import { bundle } from "./bundle.ts";
import { bundleRecord } from "./bundle_record.ts";
import { filesBelow } from "./files.ts";
import { buildDir, fingerprint, ignoreNotFound } from "./fingerprint.ts";
import { browserSources, serverSources, type Sources, SOURCES_FILE } from "./graph.ts";
import { manifestSource } from "./manifest_file.ts";
import { injectDebugIds } from "./debug_ids.ts";
import { withBuildLock } from "./lock.ts";
import { precompress } from "./precompress.ts";
import { BuildProblem, isBuildFailure, problemOf } from "./problem.ts";
import { type Scan, scan } from "./scan.ts";
import { buildServerSdk } from "./sentry_server_sdk.ts";
import { bundleServer, SERVER_DIR } from "./server_bundle.ts";
import { buildStyles } from "./styles/mod.ts";
import { cssModules } from "./styles/modules.ts";
import { tailwind } from "./styles/tailwind.ts";

export interface BuildOptions {
  root: string;
  dev: boolean;
}

/** How many builds' assets are kept. */
const KEPT_BUILDS = 3;

/** Assets for a manifest read only for its imports. */
export const NO_ASSETS: Assets = { boot: { entry: "", imports: [] }, islands: {} };

/**
 * Builds into `_build/` (or `_build/dev/`), one build of the project at a time (`lock.ts`). A
 * mistake in the project's files - esbuild's errors among them, and imports of files that are not
 * there - throws a `BuildProblem`.
 */
export async function build(options: BuildOptions): Promise<void> {
  try {
    await withBuildLock(options.root, () => buildNow(options));
  } catch (error) {
    throw isBuildFailure(error) ? problemOf(error.errors) : error;
  }
}

async function buildNow({ root, dev }: BuildOptions): Promise<void> {
  const outDir = buildDir(dev);
  const assetDir = `${outDir}/static`;
  // Gone until the build ends, written last: a build killed half-way leaves a stale build, which
  // the next start makes again, not half of one it serves.
  await rm(join(root, outDir, "fingerprint")).catch(ignoreNotFound);
  const { scan: found, actions } = await scanProject(root);
  await mkdir(join(root, assetDir), { recursive: true });
  const manifest = (buildId: string, assets: Assets, styles?: ManifestStyles) =>
    manifestSource({ scan: found, assets, assetDir, actions, buildId, outDir, styles });
  // What the stylesheets follow; the assets make no import.
  const graph = await serverGraphOf(root, outDir, manifest("", NO_ASSETS), found.islands.values());
  const guards = [
    ...lessGuardedActions(found, actions, graph.imports),
    ...paramlessGuards(found, actions),
  ];
  for (const warning of guards) {
    console.warn(`Warning: ${warning}`);
  }
  const modules = cssModules(root);
  const [scripts, stylesheets] = await Promise.allSettled([
    bundle({ root, outDir: assetDir, islands: found.islands, actions, dev, modules }),
    graph.unresolved.length > 0
      ? Promise.reject(new BuildProblem(graph.unresolved.join("\n")))
      : buildStyles({
        root,
        outDir: assetDir,
        dev,
        write: true,
        graph,
        scan: found,
        modules,
        tailwind: tailwind(root),
      }),
  ]);
  // esbuild's word on a script first: it has the code frame.
  if (scripts.status === "rejected") throw scripts.reason;
  if (stylesheets.status === "rejected") throw stylesheets.reason;
  const bundled = scripts.value;
  const styles = stylesheets.value;
  const files = [...bundled.files, ...styles.files];
  const assets: Assets = { ...bundled.assets, files: files.map((file) => `/_app/${file}`) };
  if (!dev) {
    await injectDebugIds(join(root, assetDir), files);
    files.push(...await precompress(join(root, assetDir), files));
    await buildServerSdk(root, outDir);
  }
  await keepRecent(join(root, assetDir), join(root, outDir, "builds.json"), files);

  const sources: Sources = {
    server: graph.server,
    browser: browserSources([...Object.keys(bundled.inputs), ...styles.inputs]),
  };
  const print = await fingerprint(root, dev, sources);
  await writeFile(
    join(root, outDir, "manifest.gen.ts"),
    manifest(print.slice(0, 12), assets, styles.manifest),
  );
  // What `deno task start` serves; before the fingerprint, which says the build is complete and
  // records the bundle as written, for the start to see that it still is (`bundle_record.ts`).
  let record = "";
  if (!dev) {
    const chunks = await bundleServer(root);
    await keepRecent(join(root, SERVER_DIR), join(root, outDir, "server-builds.json"), chunks);
    record = `\n${bundleRecord(join(root, SERVER_DIR), chunks)}`;
  }
  // Outside the served folder: what reached the browser bundle, for the test that keeps
  // server-only modules out of it.
  await writeFile(join(root, outDir, "browser-inputs.json"), JSON.stringify(bundled.inputs));
  await writeFile(join(root, outDir, SOURCES_FILE), JSON.stringify(sources));
  await writeFile(join(root, outDir, "fingerprint"), print + record);
}

/**
 * The server's graph of a manifest (`source`), read from a copy of it beside the real one - same
 * imports, same folder - since the real one names the build by a hash of the graph.
 */
export async function serverGraphOf(
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

/**
 * Deletes the files under `dir` that none of the last `KEPT_BUILDS` builds wrote (`files`, this
 * build's, are recorded in `history`): a server still running an earlier build may yet need one
 * (an island's chunk, a lazy chunk of the server's bundle).
 */
export async function keepRecent(dir: string, history: string, files: string[]): Promise<void> {
  const earlier: string[][] = JSON.parse(
    await readFile(history, "utf8").catch(ignoreNotFound) ?? "[]",
  );
  const recent = [files, ...earlier].slice(0, KEPT_BUILDS);
  const kept = new Set(recent.flat());
  for (const file of await filesBelow(dir)) {
    if (!kept.has(file)) await rm(join(dir, file));
  }
  await writeFile(history, JSON.stringify(recent));
}
