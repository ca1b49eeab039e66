/**
 * @module
 * The browser SDK's entry (`lib/sentry/`, from `browser.ts`) bundled with the Sentry packages once,
 * and kept on disk until the locked packages, esbuild or `lib/sentry/` change (`vendor_cache.ts`).
 * Reading and linking those packages' few hundred modules was more than half of every production
 * build (about 300 of 550 ms); the island build now reads this one file in their place. What the
 * SDK shares with the other chunks stays an import here - React, the island runtime's modules -
 * for the island build to resolve as it does for every chunk, so that they share one copy. The
 * source map is inline, where esbuild finds it and carries it on: the chunk's map still points into
 * the Sentry packages' sources.
 */
import * as esbuild from "esbuild";
import { join, relative, resolve, sep } from "node:path";
import { cachedBuild } from "./vendor_cache.ts";

type Inputs = esbuild.Metafile["inputs"];

export interface Prebundle {
  /** Loads the prebundle in place of the entry. */
  plugin: esbuild.Plugin;
  /** Every module the prebundle was made from, for the build's list of browser inputs. */
  inputs: Inputs;
}

const FOLDER = "lib/sentry";
const SOURCES = [FOLDER, "lib/build/sentry_prebundle.ts"];
const SHARED_PACKAGE = /^react(-dom)?(\/|$)/;

/** `entry` (relative to root): the browser SDK's module, which imports the Sentry packages. */
export async function sentryPrebundle(
  root: string,
  entry: string,
  dev: boolean,
): Promise<Prebundle> {
  // Where esbuild would write: nothing is written there, the outputs go to the cache's folder.
  const outdir = join(root, "_build/prebundle");
  const outputs = await cachedBuild({
    root,
    folder: `${dev ? "_build/dev" : "_build"}/vendor`,
    name: "browser-sdk",
    sources: SOURCES,
    outdir,
  }, async () => {
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: [join(root, entry)],
      outfile: join(outdir, "sdk.js"),
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "esnext", // the island build lowers it to the browsers' targets
      define: { "process.env.NODE_ENV": JSON.stringify(dev ? "development" : "production") },
      sourcemap: "inline",
      metafile: true,
      write: false,
      logLevel: "silent",
      plugins: [sharedStaysOutside(root)],
    });
    const [sdk] = result.outputFiles;
    const list = new TextEncoder().encode(JSON.stringify(result.metafile.inputs));
    return [sdk, { path: join(outdir, "inputs.json"), contents: list }];
  });
  const read = (name: string) =>
    new TextDecoder().decode(
      outputs.find((output) => output.path === join(outdir, name))!.contents,
    );
  const code = read("sdk.js");
  const path = join(root, entry);
  return {
    plugin: {
      name: "sentry-prebundle",
      setup(build) {
        build.onLoad({ filter: new RegExp(`^${escape(path)}$`) }, () => ({
          contents: code,
          loader: "js",
          resolveDir: root,
        }));
      },
    },
    inputs: JSON.parse(read("inputs.json")),
  };
}

/**
 * React, and our modules outside `lib/sentry/` (the island runtime's), stay imports: as paths
 * from the root, which still resolve wherever the project is copied to.
 */
function sharedStaysOutside(root: string): esbuild.Plugin {
  const own = join(root, FOLDER) + sep;
  return {
    name: "shared-stays-outside",
    setup(build) {
      build.onResolve({ filter: SHARED_PACKAGE }, ({ path }) => ({ path, external: true }));
      build.onResolve({ filter: /^\.\.?\// }, ({ path, resolveDir }) => {
        const file = resolve(resolveDir, path);
        if (file.startsWith(own) || file.includes(`${sep}node_modules${sep}`)) return undefined;
        return { path: `./${relative(root, file).split(sep).join("/")}`, external: true };
      });
    },
  };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
