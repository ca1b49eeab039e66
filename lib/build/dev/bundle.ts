/**
 * @module
 * Dev only: the browser build of `deno task dev`, production's entries and options
 * (`../bundle.ts`) kept warm in esbuild contexts, so a save rebuilds only what changed, plus Fast
 * Refresh (`refresh.ts`) and React from the vendor module (`vendor.ts`). Nothing goes to disk: the
 * dev server serves every output of the session from memory, by URL. Content-hashed names make
 * each URL one content, so a page that loaded an older chunk still gets it, and each stack frame's
 * URL names the source map that decodes it.
 */
import * as esbuild from "esbuild";
import { join, relative } from "node:path";
import type { Assets } from "../../server/manifest.ts";
import type { ActionModule } from "../actions.ts";
import { actionStubs } from "../action_stubs.ts";
import { importMap } from "../import_map.ts";
import {
  ACTION_CLIENT,
  actionClientOptions,
  assetsOf,
  assetUrl,
  commonOptions,
  islandOptions,
  outputOf,
} from "../bundle.ts";
import { isBuildFailure } from "../problem.ts";
import { stylesheetImports } from "../styles/classes_plugin.ts";
import type { CssModules } from "../styles/modules.ts";
import { atSources, reactRefresh } from "./refresh.ts";
import { buildSentryVendor, buildVendor, vendorModules } from "./vendor.ts";
import type { Output } from "../vendor_cache.ts";

export interface DevBundle {
  assets: Assets;
  /** The islands build's metafile: entry points, chunks and the sources in each. */
  metafile: esbuild.Metafile;
  /** Every source both builds read, relative to the root. */
  inputs: Set<string>;
}

export interface DevBundler {
  /** Every output of the session so far, by URL path (`/_app/...`). */
  files: Map<string, Uint8Array>;
  /** An output by URL path, once built: the Sentry SDK's is built after the first bundle. */
  file(path: string): Promise<Uint8Array | undefined>;
  /** Rebuilds; throws esbuild's `BuildFailure` when the sources do not build. */
  bundle(islands: Map<string, string>, actions: ActionModule[]): Promise<DevBundle>;
  /** Loads Babel, in the background, for the first save. */
  prepare(): void;
  dispose(): Promise<void>;
}

export async function devBundler(
  root: string,
  outDir: string,
  modules: CssModules,
): Promise<DevBundler> {
  const outdir = join(root, outDir);
  const files = new Map<string, Uint8Array>();
  const keep = (outputs: Output[]) => {
    for (const file of outputs) files.set(`/_app/${relative(outdir, file.path)}`, file.contents);
  };
  const common = { ...commonOptions(root, outDir, true), write: false as const };
  const client = await esbuild.context({
    ...common,
    ...actionClientOptions(root),
    plugins: [importMap(root)],
  });
  const refresh = reactRefresh(root, join(outdir, "..", "refresh.json"));
  const plugins = [
    vendorModules(root),
    stylesheetImports(root, modules),
    importMap(root),
    refresh.plugin,
  ];
  // The entry points, the stubs of the actions and the action client's URL are fixed for a
  // context: a change to any of them makes a new one.
  let islands: { key: string; context: esbuild.BuildContext<typeof common> } | undefined;
  // The vendor modules are not the islands' inputs: the first start need not wait for them. The
  // Sentry SDK's is built when first asked for, if ever: Sentry may be off.
  const vendor = buildVendor(root, outdir).then(keep, failed);
  let sentry: Promise<void> | undefined;
  const sentryVendor = () => sentry ??= buildSentryVendor(root, outdir).then(keep, failed);

  return {
    files,
    async file(path) {
      if (!files.has(path) && path.startsWith("/_app/dev/")) {
        await Promise.all([vendor, sentryVendor()]);
      }
      return files.get(path);
    },
    prepare: refresh.prepare,
    async bundle(found, actions) {
      const clientBuild = await client.rebuild();
      keep(clientBuild.outputFiles);
      const clientUrl = assetUrl(outputOf(clientBuild.metafile, ACTION_CLIENT), outDir);
      const key = JSON.stringify([[...found], actions, clientUrl]);
      if (islands?.key !== key) {
        await islands?.context.dispose();
        const context = await esbuild.context({
          ...common,
          ...islandOptions(root, found, clientUrl),
          jsxDev: true,
          define: { ...common.define, ACTION_CLIENT_URL: JSON.stringify(clientUrl) },
          plugins: [actionStubs(root, actions), ...plugins],
        });
        islands = { key, context };
      }
      const result = await islands.context.rebuild().catch((error) => {
        if (isBuildFailure(error)) error.errors = atSources(root, error.errors);
        throw error;
      });
      keep(result.outputFiles);
      return {
        assets: assetsOf(result.metafile, outDir, found),
        metafile: result.metafile,
        inputs: new Set(
          [clientBuild, result].flatMap((build) => Object.keys(build.metafile.inputs)),
        ),
      };
    },
    async dispose() {
      await Promise.all([client.dispose(), islands?.context.dispose(), vendor, sentry]);
    },
  };
}

/** A vendor module that does not build is missing (404) and said so, once. */
function failed(error: unknown) {
  console.error("dev: a vendor module did not build:", error);
}
