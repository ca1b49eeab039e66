/**
 * @module
 * The production server as an esbuild bundle, `_build/server/`: `deno task start` serves from it
 * (`cli/start.ts`, `cli/launch.ts`). Deno keeps every module it loads in V8's heap with an inline
 * source map, and V8 sizes the old generation at a multiple of what survives; bundled, our ~150
 * modules become a few chunks without them: 12.65 -> 9.61 MB of heap after load
 * (`docs/performance.md`, "a bundled server"). Our modules (`lib/`, the routes, the manifest) are
 * bundled, split so that each `import()` stays a lazy chunk; npm packages are left to Deno
 * (through `deno.json`). Source maps go in `.js.map` files beside the chunks, which Deno applies
 * to stack traces: a failure's stack, and so its digest, is the source's. The chunks sit two
 * folders below the root, as `lib/cli/` does, so paths made from `import.meta.url`
 * (`cli/root.ts`, `errors/digest.ts`, `sentry/sdk.ts`) hold in both.
 */
import type * as esbuild from "esbuild";
import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { localAliases, resolveAlias } from "./import_map.ts";

/** Where the bundle goes, from the root. */
export const SERVER_DIR = "_build/server";

/** The bundle's entry points: the server, and the launcher that may start it apart. */
const SERVER_ENTRIES = { serve: "lib/cli/serve.ts", launcher: "lib/cli/launcher.ts" };

/**
 * Imports left to Deno as they are, from `_build/server/` as from `lib/cli/`: the development
 * build's manifest (a bundle serves production only) and a `routes/_settings.ts` the app does not
 * have (`cli/declared.ts` looks before it imports).
 */
const LEFT_TO_DENO = /\/_build\/dev\/manifest\.gen\.ts$|\/routes\/_settings\.ts$/;

/**
 * Bundles the server into `_build/server/` (a production build, its manifest written); returns the
 * files written, relative to that folder. Chunks are named by their content: those of earlier
 * builds stay until `build/mod.ts` lets them go.
 */
export async function bundleServer(root: string): Promise<string[]> {
  const { build } = await import("esbuild");
  const outdir = join(root, SERVER_DIR);
  const { metafile } = await build({
    ...serverBuildOptions(root, SERVER_ENTRIES, outdir),
    metafile: true,
    sourcemap: "linked",
    logLevel: "silent",
  });
  return Object.keys(metafile.outputs).map((file) => relative(outdir, join(root, file)));
}

/**
 * What a server bundle is built with, bar its source maps and logging: `entries` (names to files
 * from `root`) into `outdir`, split, our modules bundled and npm packages left to Deno unless
 * `packages` is `"bundle"` (`bench/bundled_server.ts` weighs both).
 */
export function serverBuildOptions(
  root: string,
  entries: Record<string, string>,
  outdir: string,
  packages: "external" | "bundle" = "external",
): esbuild.BuildOptions {
  return {
    absWorkingDir: root,
    entryPoints: Object.fromEntries(
      Object.entries(entries).map(([name, file]) => [name, join(root, file)]),
    ),
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "esnext",
    // Deno's conditions for a package's exports.
    conditions: ["deno", "node", "import", "default"],
    jsx: "automatic",
    jsxImportSource: "shell",
    define: { "process.env.NODE_ENV": '"production"' },
    plugins: [serverResolver(root, packages)],
  };
}

/** A package's own imports, when packages are bundled; the build's tools (native) never are. */
const BUILD_TOOLS = /^(esbuild|lightningcss|tailwindcss|@tailwindcss\/|@babel\/)/;

function serverResolver(root: string, packages: "external" | "bundle"): esbuild.Plugin {
  return {
    name: "server",
    async setup(build) {
      const aliases = await localAliases(root);
      build.onResolve({ filter: /.*/ }, ({ path, importer, kind }) => {
        if (kind === "entry-point" || importer.includes("/node_modules/")) return undefined;
        if (path.startsWith("node:")) return { path, external: true };
        if (/^\.\.?\//.test(path)) {
          const file = resolve(dirname(importer), path);
          if (LEFT_TO_DENO.test(file) && !existsSync(file) || file.includes("/_build/dev/")) {
            return { path, external: true };
          }
          // A stylesheet the import map sends to its generated module in `_build/css/`.
          const target = resolveAlias(aliases, "./" + relative(root, file));
          return target ? { path: join(root, target) } : undefined;
        }
        const target = resolveAlias(aliases, path);
        if (target) return { path: join(root, target) };
        // A package (`hono`, `npm:...`): Deno's, through deno.json, unless bundled too.
        const external = packages === "external" || BUILD_TOOLS.test(path);
        return external ? { path, external: true } : undefined;
      });
    },
  };
}
