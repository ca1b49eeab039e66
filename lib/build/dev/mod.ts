/**
 * @module
 * Dev only: the build `deno task dev` repeats on every save - scan, read the server's module graph,
 * bundle the browser side in memory (`bundle.ts`, and the stylesheets, `../styles/`), write the
 * manifest the server imports. The manifest goes where a development build's does (`_build/dev/`),
 * written whole or not at all since a server may be starting and reading it; the fingerprint goes,
 * so `NODE_ENV=development deno task start` on its own builds afresh rather than take assets only
 * this process serves.
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { buildDir, ignoreNotFound } from "../fingerprint.ts";
import type { Assets, ManifestStyles } from "../../server/manifest.ts";
import type { ServerGraph } from "../graph.ts";
import { manifestSource } from "../manifest_file.ts";
import { NO_ASSETS, scanProject, serverGraphOf } from "../mod.ts";
import { BuildProblem } from "../problem.ts";
import { buildStyles } from "../styles/mod.ts";
import { cssModules } from "../styles/modules.ts";
import { tailwind } from "../styles/tailwind.ts";
import { type DevBundle, devBundler } from "./bundle.ts";

export interface DevBuild extends DevBundle {
  /** Island name -> its file. */
  islands: Map<string, string>;
  /** The server's module graph the build followed. */
  graph: ServerGraph;
  /** Each stylesheet the app imports (path from the root) -> its URL. */
  styles: Map<string, string>;
  /** What the server renders from the stylesheets, but their URLs (`Styles.shape`). */
  styleShape: string;
  /** `deno.json` as the build rewrote it, when it did (`Styles.config`). */
  config?: string;
}

export interface DevBuilder {
  /** Every browser output of the session so far, by URL path (`/_app/...`). */
  files: Map<string, Uint8Array>;
  /** A browser output by URL path, waiting for one still being built. */
  file(path: string): Promise<Uint8Array | undefined>;
  /**
   * Scans, bundles and writes the manifest; throws what stops it (esbuild's `BuildFailure`).
   * `stylesOnly`: only stylesheets changed since the last build, whose module graph still holds.
   */
  build(stylesOnly?: boolean): Promise<DevBuild>;
  /** Loads Babel, in the background, for the first save. */
  prepare(): void;
  dispose(): Promise<void>;
}

export async function devBuilder(root: string): Promise<DevBuilder> {
  const outDir = buildDir(true);
  const assetDir = `${outDir}/static`;
  const manifest = join(root, outDir, "manifest.gen.ts");
  const modules = cssModules(root);
  const compiler = tailwind(root);
  let graph: ServerGraph | undefined;
  const [bundler] = await Promise.all([
    devBundler(root, assetDir, modules),
    rm(join(root, outDir, "fingerprint")).catch(ignoreNotFound),
    mkdir(join(root, outDir), { recursive: true }),
  ]);
  return {
    files: bundler.files,
    file: bundler.file,
    async build(stylesOnly = false) {
      const { scan, actions } = await scanProject(root);
      const manifestOf = (assets: Assets, styles?: ManifestStyles) =>
        manifestSource({ scan, assets, assetDir, actions, buildId: "dev", outDir, styles });
      if (!stylesOnly || !graph) {
        graph = await serverGraphOf(root, outDir, manifestOf(NO_ASSETS), scan.islands.values());
      }
      const [scripts, stylesheets] = await Promise.allSettled([
        bundler.bundle(scan.islands, actions),
        graph.unresolved.length > 0
          ? Promise.reject(new BuildProblem(graph.unresolved.join("\n")))
          : buildStyles({
            root,
            outDir: assetDir,
            dev: true,
            write: false,
            graph,
            scan,
            modules,
            tailwind: compiler,
          }),
      ]);
      if (scripts.status === "rejected") throw scripts.reason;
      if (stylesheets.status === "rejected") throw stylesheets.reason;
      const bundle = scripts.value;
      const styles = stylesheets.value;
      for (const file of styles.outputs) {
        bundler.files.set(`/_app/${relative(join(root, assetDir), file.path)}`, file.contents);
      }
      await writeFile(`${manifest}.tmp`, manifestOf(bundle.assets, styles.manifest));
      await rename(`${manifest}.tmp`, manifest);
      return {
        ...bundle,
        inputs: new Set([...bundle.inputs, ...styles.inputs]),
        islands: scan.islands,
        graph,
        styles: styles.urls,
        styleShape: styles.shape,
        config: styles.config,
      };
    },
    prepare: bundler.prepare,
    dispose: bundler.dispose,
  };
}
