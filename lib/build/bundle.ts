/**
 * @module
 * Bundles the browser side with esbuild: the island boot runtime and one entry per island, as
 * minified ESM with shared chunks, content-hashed names (an unchanged island keeps its URL across
 * deploys) and source maps. Returns each entry's URL with the chunks it needs, for preloading.
 */
import * as esbuild from "esbuild";
import { join } from "node:path";
import type { Assets, Chunk } from "../manifest.ts";
import type { ActionModule } from "./actions.ts";
import { actionStubs } from "./action_stubs.ts";

export interface BundleOptions {
  root: string;
  /** Output folder, relative to root. */
  outDir: string;
  islands: Map<string, string>;
  /** `"use server"` modules: stubs take their place in the bundle. */
  actions: ActionModule[];
  dev: boolean;
}

const BOOT = "lib/client/boot.ts";
const SENTRY = "lib/client/sentry.ts";

export async function bundle(options: BundleOptions): Promise<Assets> {
  const { root, outDir, dev } = options;
  const entryPoints = [
    { in: join(root, BOOT), out: "boot" },
    { in: join(root, SENTRY), out: "sentry" },
    ...[...options.islands].map(([name, file]) => ({ in: join(root, file), out: name })),
  ];
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints,
    outdir: join(root, outDir),
    entryNames: "[name]-[hash]",
    chunkNames: "chunk-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "browser",
    target: ["es2022", "chrome111", "firefox113", "safari16.4"],
    minify: !dev,
    sourcemap: "linked",
    metafile: true,
    jsx: "automatic",
    jsxImportSource: "react",
    define: { "process.env.NODE_ENV": JSON.stringify(dev ? "development" : "production") },
    legalComments: "none",
    plugins: [actionStubs(root, options.actions)],
    logLevel: "silent",
  });
  return assetsOf(result.metafile, outDir, options.islands);
}

function assetsOf(
  metafile: esbuild.Metafile,
  outDir: string,
  islands: Map<string, string>,
): Assets {
  const url = (output: string) => `/_app/${output.slice(outDir.length + 1)}`;
  const chunkOf = (source: string): Chunk => {
    const [output] = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint === source)!;
    const imports = new Set<string>();
    const visit = (path: string) => {
      for (const dep of metafile.outputs[path].imports) {
        if (dep.kind === "import-statement" && !imports.has(dep.path)) {
          imports.add(dep.path);
          visit(dep.path);
        }
      }
    };
    visit(output);
    return { entry: url(output), imports: [...imports].map(url) };
  };
  return {
    boot: chunkOf(BOOT),
    islands: Object.fromEntries([...islands].map(([name, file]) => [name, chunkOf(file)])),
    sentry: chunkOf(SENTRY),
  };
}
