/**
 * @module
 * Dev only: the dependencies the island build would otherwise link and print again on every
 * save, built once per session under `/_app/dev/` - React, React DOM and the refresh runtime with
 * the dev client (`buildVendor`), and the Sentry SDK (`buildSentryVendor`, ten times their size,
 * built when a page first asks for it). `vendorModules` points the island build's imports there:
 *  - each `react*` import becomes a small module re-exporting from the vendor module: ESM shims
 *    rather than externals, so a CommonJS dependency's `require("react")` keeps working (esbuild's
 *    `__require` of an external throws in the browser), and ESM evaluation order runs the vendor
 *    module, and the refresh hook with it, before any island code;
 *  - the Sentry packages, imported only by our own ESM, are plain externals.
 * Both are kept on disk for the next session (`../vendor_cache.ts`).
 */
import * as esbuild from "esbuild";
import { createRequire } from "node:module";
import process from "node:process";
import { join } from "node:path";
import { cachedBuild, type Output } from "../vendor_cache.ts";

const VENDOR_URL = "/_app/dev/vendor.js";

/** The modules the vendor module holds (`client/dev/vendor.ts` lists the same). */
const REACT = [
  "react",
  "react/jsx-runtime",
  "react/jsx-dev-runtime",
  "react-dom",
  "react-dom/client",
];
const SENTRY = { "@sentry/react": "sentry-react", "@sentry/core": "sentry-core" };

function vendorOptions(root: string, outdir: string) {
  return {
    absWorkingDir: root,
    outdir: join(outdir, "dev"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["es2022"],
    // The refresh runtime is a no-op in a production build of React.
    define: { "process.env.NODE_ENV": '"development"' },
    sourcemap: "linked",
    write: false,
    logLevel: "silent",
  } satisfies esbuild.BuildOptions;
}

/** What the vendor modules are made from, besides the packages. */
const SOURCES = ["lib/client/dev", "lib/build/dev/vendor.ts"];
const CACHE = "_build/dev/vendor";

export function buildVendor(root: string, outdir: string): Promise<Output[]> {
  return cachedBuild({ root, folder: CACHE, name: "react", sources: SOURCES, outdir }, async () => {
    const result = await esbuild.build({
      ...vendorOptions(root, outdir),
      entryPoints: [
        { in: join(root, "lib/client/dev/vendor.ts"), out: "vendor" },
        { in: join(root, "lib/client/dev/client.ts"), out: "client" },
      ],
    });
    return result.outputFiles;
  });
}

export function buildSentryVendor(root: string, outdir: string): Promise<Output[]> {
  return cachedBuild(
    { root, folder: CACHE, name: "sentry", sources: SOURCES, outdir },
    async () => {
      const result = await esbuild.build({
        ...vendorOptions(root, outdir),
        entryPoints: Object.entries(SENTRY).map(([name, out]) => ({ in: name, out })),
        splitting: true,
        chunkNames: "chunk-[hash]",
        plugins: [reactShims(root)],
      });
      return result.outputFiles;
    },
  );
}

/** Points the island build's imports of React and Sentry at the vendor modules. */
export function vendorModules(root: string): esbuild.Plugin {
  const shims = reactShims(root);
  const sentry = new RegExp(`^(${Object.keys(SENTRY).map(escape).join("|")})$`);
  return {
    name: "vendor-modules",
    setup(build) {
      build.onResolve({ filter: sentry }, ({ path }) => ({
        path: `/_app/dev/${SENTRY[path as keyof typeof SENTRY]}.js`,
        external: true,
      }));
      return shims.setup(build);
    },
  };
}

/**
 * A name missing from a shim fails the build loudly ("No matching export"): the list cannot be
 * silently incomplete.
 */
function reactShims(root: string): esbuild.Plugin {
  const names = exportNames(root);
  const filter = new RegExp(`^(${REACT.map(escape).join("|")})$`);
  return {
    name: "react-shims",
    setup(build) {
      build.onResolve({ filter }, ({ path }) => ({ path, namespace: "react-shim" }));
      build.onResolve({ filter: new RegExp(`^${escape(VENDOR_URL)}$`) }, ({ path }) => ({
        path,
        external: true,
      }));
      build.onLoad({ filter: /.*/, namespace: "react-shim" }, ({ path }) => ({
        contents: `import { modules } from ${JSON.stringify(VENDOR_URL)};
const m = modules[${JSON.stringify(path)}];
export default m;
export const { ${names.get(path)!.join(", ")} } = m;
`,
        loader: "js",
      }));
    },
  };
}

/** Each React module's export names, as its development build has them. */
function exportNames(root: string): Map<string, string[]> {
  const previous = process.env.NODE_ENV;
  process.env.NODE_ENV = "development"; // React's index.js picks its build by it
  try {
    const require = createRequire(join(root, "/"));
    return new Map(
      REACT.map((name) => [name, Object.keys(require(name)).filter((n) => n !== "default")]),
    );
  } finally {
    if (previous === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = previous;
  }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
