/**
 * @module
 * Bundles the browser side with esbuild: the island boot runtime and one entry per island, as
 * minified ESM with shared chunks, content-hashed names (an unchanged island keeps its URL across
 * deploys) and source maps, plus the action client on its own. Returns each entry's URL with the
 * chunks it needs, for preloading. Imports resolve as Deno resolves them: the project's aliases
 * (`import_map.ts`), packages from `node_modules`. `deno task dev` builds the same entries with
 * the same options, kept warm in esbuild contexts (`dev/bundle.ts`).
 */
import * as esbuild from "esbuild";
import { join } from "node:path";
import type { Assets, Chunk } from "../server/manifest.ts";
import type { ActionModule } from "./actions.ts";
import { actionStubs } from "./action_stubs.ts";
import { importMap } from "./import_map.ts";
import { sentryPrebundle } from "./sentry_prebundle.ts";
import { stylesheetImports } from "./styles/classes_plugin.ts";
import type { CssModules } from "./styles/modules.ts";

export interface BundleOptions {
  root: string;
  /** Output folder, relative to root. */
  outDir: string;
  islands: Map<string, string>;
  /** `"use server"` modules: stubs take their place in the bundle. */
  actions: ActionModule[];
  dev: boolean;
  /** The CSS modules islands import: their class maps go into the islands' code. */
  modules: CssModules;
}

const BOOT = "lib/client/boot.ts";
const SENTRY = "lib/sentry/browser.ts";
export const ACTION_CLIENT = "lib/client/action_client.ts";

export interface Bundle {
  assets: Assets;
  /** Every file the bundle wrote, relative to `outDir`. */
  files: string[];
  /** What went into the browser's code: every module each build reached, by path from root. */
  inputs: Record<string, esbuild.Metafile["inputs"][string]>;
}

/** What every browser build shares, the action client's and the islands'. */
export function commonOptions(root: string, outDir: string, dev: boolean) {
  return {
    absWorkingDir: root,
    outdir: join(root, outDir),
    entryNames: "[name]-[hash]",
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["es2022", "chrome111", "firefox113", "safari16.4"],
    minify: !dev,
    sourcemap: "linked",
    metafile: true,
    legalComments: "none",
    logLevel: "silent",
    define: { "process.env.NODE_ENV": JSON.stringify(dev ? "development" : "production") },
  } satisfies esbuild.BuildOptions;
}

/** The action client: a bundle of its own, which the islands import by URL. */
export function actionClientOptions(root: string) {
  return { entryPoints: [{ in: join(root, ACTION_CLIENT), out: "action-client" }] };
}

/** The boot runtime, the Sentry SDK and the islands, sharing chunks. */
export function islandOptions(root: string, islands: Map<string, string>, clientUrl: string) {
  return {
    entryPoints: [
      { in: join(root, BOOT), out: "boot" },
      { in: join(root, SENTRY), out: "sentry" },
      ...[...islands].map(([name, file]) => ({ in: join(root, file), out: name })),
    ],
    chunkNames: "chunk-[hash]",
    splitting: true,
    jsx: "automatic",
    jsxImportSource: "react",
    external: [clientUrl],
  } satisfies esbuild.BuildOptions;
}

export async function bundle(options: BundleOptions): Promise<Bundle> {
  const { root, outDir, dev } = options;
  const common = commonOptions(root, outDir, dev);
  // The action client is a bundle of its own, imported at an action's first call: no page loads
  // it before. Built with the islands, its devalue would share files with the boot runtime's (which
  // parses props) and, as esbuild splits by file, bring devalue's stringify to every island page.
  const [client, sentry] = await Promise.all([
    esbuild.build({ ...common, ...actionClientOptions(root), plugins: [importMap(root)] }),
    sentryPrebundle(root, SENTRY, dev),
  ]);
  const clientUrl = assetUrl(outputOf(client.metafile, ACTION_CLIENT), outDir);
  const result = await esbuild.build({
    ...common,
    ...islandOptions(root, options.islands, clientUrl),
    define: { ...common.define, ACTION_CLIENT_URL: JSON.stringify(clientUrl) },
    plugins: [
      sentry.plugin,
      actionStubs(root, options.actions),
      stylesheetImports(root, options.modules),
      importMap(root),
    ],
  });
  const files = [client, result].flatMap((r) => Object.keys(r.metafile.outputs))
    .map((output) => output.slice(outDir.length + 1));
  const inputs = { ...client.metafile.inputs, ...sentry.inputs, ...result.metafile.inputs };
  return { assets: assetsOf(result.metafile, outDir, options.islands), files, inputs };
}

/** The output file esbuild built from the entry point `source`. */
export function outputOf(metafile: esbuild.Metafile, source: string): string {
  const [output] = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint === source)!;
  return output;
}

export function assetUrl(output: string, outDir: string): string {
  return `/_app/${output.slice(outDir.length + 1)}`;
}

export function assetsOf(
  metafile: esbuild.Metafile,
  outDir: string,
  islands: Map<string, string>,
): Assets {
  const url = (output: string) => assetUrl(output, outDir);
  const chunkOf = (source: string): Chunk => {
    const output = outputOf(metafile, source);
    const imports = new Set<string>();
    const visit = (path: string) => {
      for (const dep of metafile.outputs[path].imports) {
        if (dep.kind !== "import-statement") continue;
        // An external import is a URL already (in dev: React's vendor module).
        const chunk = dep.external ? dep.path : url(dep.path);
        if (imports.has(chunk)) continue;
        imports.add(chunk);
        if (!dep.external) visit(dep.path);
      }
    };
    visit(output);
    return { entry: url(output), imports: [...imports] };
  };
  return {
    boot: chunkOf(BOOT),
    islands: Object.fromEntries([...islands].map(([name, file]) => [name, chunkOf(file)])),
    sentry: chunkOf(SENTRY),
  };
}
