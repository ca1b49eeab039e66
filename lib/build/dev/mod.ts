/**
 * @module
 * Dev only: the build `deno task dev` repeats on every save — scan, bundle the browser side in
 * memory (`bundle.ts`), write the manifest the server imports. The manifest goes where a
 * development build's does (`_build/dev/`), written whole or not at all since a server may be
 * starting and reading it; the fingerprint goes, so `NODE_ENV=development deno task start` on its
 * own builds afresh rather than take assets only this process serves.
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { buildDir, ignoreNotFound } from "../fingerprint.ts";
import { manifestSource } from "../manifest_file.ts";
import { scanProject } from "../mod.ts";
import { type DevBundle, devBundler } from "./bundle.ts";

export interface DevBuild extends DevBundle {
  /** Island name → its file. */
  islands: Map<string, string>;
}

export interface DevBuilder {
  /** Every browser output of the session so far, by URL path (`/_app/…`). */
  files: Map<string, Uint8Array>;
  /** A browser output by URL path, waiting for one still being built. */
  file(path: string): Promise<Uint8Array | undefined>;
  /** Scans, bundles and writes the manifest; throws what stops it (esbuild's `BuildFailure`). */
  build(): Promise<DevBuild>;
  /** Loads Babel, in the background, for the first save. */
  prepare(): void;
  dispose(): Promise<void>;
}

export async function devBuilder(root: string): Promise<DevBuilder> {
  const outDir = buildDir(true);
  const assetDir = `${outDir}/static`;
  const manifest = join(root, outDir, "manifest.gen.ts");
  const [bundler] = await Promise.all([
    devBundler(root, assetDir),
    rm(join(root, outDir, "fingerprint")).catch(ignoreNotFound),
    mkdir(join(root, outDir), { recursive: true }),
  ]);
  return {
    files: bundler.files,
    file: bundler.file,
    async build() {
      const { scan, actions } = await scanProject(root);
      const bundle = await bundler.bundle(scan.islands, actions);
      const source = manifestSource({
        scan,
        assets: bundle.assets,
        assetDir,
        actions,
        buildId: "dev",
        outDir,
      });
      await writeFile(`${manifest}.tmp`, source);
      await rename(`${manifest}.tmp`, manifest);
      return { ...bundle, islands: scan.islands };
    },
    prepare: bundler.prepare,
    dispose: bundler.dispose,
  };
}
