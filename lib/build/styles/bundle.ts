/**
 * @module
 * Bundles the stylesheets the app imports with esbuild: one stylesheet per imported file, its
 * `@import`s inlined (a package's too, from `node_modules`), the files its `url()`s name copied
 * beside it under content-hashed names, lowered for the browsers the scripts target, minified in
 * production (by Lightning CSS), content-hashed and with a source map. A CSS module is scoped
 * first (`modules.ts`), a Tailwind stylesheet compiled first (`tailwind.ts`); their source maps
 * carry through to the sources. A `url()` or `@import` that leaves the project
 * (`../../../etc/passwd`, a symlink out) is a build error, never a copy; one that starts with `/`
 * is the app's own URL (`static/`), left as it is. Each stylesheet's URL comes back with the files
 * written and every source read.
 */
import * as esbuild from "esbuild";
import { realpathSync } from "node:fs";
import remapping from "@jridgewell/remapping";
import { transform } from "lightningcss";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import { assetUrl, commonOptions } from "../bundle.ts";
import type { CssModules } from "./modules.ts";
import { isCssModule } from "./modules.ts";
import { isTailwind, type Tailwind } from "./tailwind.ts";

/** What `url()` may name: copied with a content-hashed name. Anything else is a build error. */
const ASSETS = [
  "avif",
  "bmp",
  "cur",
  "eot",
  "gif",
  "ico",
  "jpeg",
  "jpg",
  "otf",
  "png",
  "svg",
  "ttf",
  "webp",
  "woff",
  "woff2",
];

export interface StyleBundleOptions {
  root: string;
  /** Output folder, relative to root. */
  outDir: string;
  /** The stylesheets, by path from the root. */
  sheets: string[];
  dev: boolean;
  /** Write the files (a build on disk), or keep them in memory (`deno task dev`'s). */
  write: boolean;
  modules: CssModules;
  tailwind: Tailwind;
  /** The modules a Tailwind stylesheet takes class names from. */
  scanned: string[];
}

export interface StyleBundle {
  /** Each stylesheet's URL (`/_app/css/...`). */
  urls: Map<string, string>;
  /** Every file written, relative to `outDir`. */
  files: string[];
  /** Every source read (stylesheets, the files they name, Tailwind's), by path from the root. */
  inputs: string[];
  /** The outputs (written to disk too, when asked to). */
  outputs: Pick<esbuild.OutputFile, "path" | "contents">[];
}

export async function bundleStyles(options: StyleBundleOptions): Promise<StyleBundle> {
  const { root, outDir, sheets, dev, write } = options;
  const urls = new Map<string, string>();
  if (sheets.length === 0) return { urls, files: [], inputs: [], outputs: [] };
  // The scripts' options but `define`, which no stylesheet reads.
  const { define: _define, ...common } = commonOptions(root, outDir, dev);
  const tailwindInputs = new Set<string>();
  const result = await esbuild.build({
    ...common,
    // Lightning CSS minifies instead (`minified`): esbuild's minifier takes minutes on a CSS
    // module of a few megabytes (100,000 rules sharing a few declarations), Lightning CSS a
    // quarter of a second.
    minify: false,
    write: false,
    entryPoints: sheets.map((sheet) => ({ in: join(root, sheet), out: outName(sheet) })),
    entryNames: "[dir]/[name]-[hash]",
    assetNames: "assets/[name]-[hash]",
    loader: {
      // Global: a CSS module is scoped already (`modules.ts`), with names that do not depend on
      // the build, as esbuild's own would.
      ".css": "css",
      ".module.css": "css",
      ...Object.fromEntries(ASSETS.map((ext) => [`.${ext}`, "file" as const])),
    },
    plugins: [withinProject(root), sources(root, options, tailwindInputs)],
  });
  const metafile = result.metafile!;
  for (const [output, { entryPoint }] of Object.entries(metafile.outputs)) {
    if (entryPoint) urls.set(fromRoot(root, join(root, entryPoint)), assetUrl(output, outDir));
  }
  const inputs = new Set(tailwindInputs);
  for (const input of Object.keys(metafile.inputs)) {
    if (!input.includes(":")) inputs.add(fromRoot(root, join(root, input)));
  }
  const outputs = dev ? result.outputFiles! : minified(result.outputFiles!, common.target);
  if (write) {
    await Promise.all(outputs.map(async ({ path, contents }) => {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, contents);
    }));
  }
  return {
    urls,
    files: Object.keys(metafile.outputs).map((output) => output.slice(outDir.length + 1)),
    inputs: [...inputs].sort(),
    outputs,
  };
}

type Output = Pick<esbuild.OutputFile, "path" | "contents">;

/** The stylesheets minified, lowered for `target`, their maps mapping through to the sources. */
function minified(outputs: esbuild.OutputFile[], target: string[]): Output[] {
  const maps = new Map(
    outputs.filter(({ path }) => path.endsWith(".css.map"))
      .map(({ path, text }) => [path, text]),
  );
  return outputs.flatMap((output): Output[] => {
    const { path, contents } = output;
    if (!path.endsWith(".css")) return maps.has(path) ? [] : [{ path, contents }];
    const name = basename(path);
    const result = transform({
      filename: name,
      code: new TextEncoder().encode(output.text.replace(SOURCE_MAP_COMMENT, "")),
      minify: true,
      sourceMap: true,
      targets: lightningTargets(target),
    });
    // Through esbuild's map to the sources: the bundle in between is no source of its own.
    const map = remapping(
      new TextDecoder().decode(result.map as Uint8Array),
      (file) => file === name ? maps.get(`${path}.map`) : null,
    );
    const code = `${new TextDecoder().decode(result.code)}\n/*# sourceMappingURL=${name}.map */\n`;
    return [
      { path, contents: new TextEncoder().encode(code) },
      { path: `${path}.map`, contents: new TextEncoder().encode(JSON.stringify(map)) },
    ];
  });
}

const SOURCE_MAP_COMMENT = /\/\*# sourceMappingURL=[^*]*\*\/\s*$/;

/** esbuild's targets (`chrome111`, `safari16.4`) as Lightning CSS takes them. */
function lightningTargets(target: string[]): Record<string, number> {
  const targets: Record<string, number> = {};
  for (const name of target) {
    const [, browser, major, minor = "0"] = /^([a-z]+)(\d+)(?:\.(\d+))?$/.exec(name) ?? [];
    if (browser && browser !== "es") targets[browser] = (+major << 16) | (+minor << 8);
  }
  return targets;
}

/** `routes/(info)/about.css` -> `css/routes/_info_/about`: a URL path with nothing to escape. */
function outName(sheet: string): string {
  return `css/${sheet.replace(/\.css$/i, "").replace(/[^\w./-]/g, "_")}`;
}

function fromRoot(root: string, path: string): string {
  return relative(root, path).split(sep).join("/");
}

/**
 * Resolves `@import` and `url()` as esbuild does, then refuses what lands outside the project:
 * its folder, and the packages it installed (`node_modules`, wherever the link points).
 */
function withinProject(root: string): esbuild.Plugin {
  const allowed = [root, join(root, "node_modules")].map((dir) => realOrSelf(dir) + sep);
  return {
    name: "within-project",
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind !== "url-token" && args.kind !== "import-rule") return undefined;
        if (args.pluginData === "checked") return undefined;
        // The app's own URL: a file of `static/`, or a route.
        if (/^\/(?!\/)/.test(args.path)) return { path: args.path, external: true };
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: "checked",
        });
        if (resolved.errors.length > 0 || resolved.external || resolved.namespace !== "file") {
          return resolved;
        }
        const real = realOrSelf(resolved.path);
        if (allowed.some((dir) => real.startsWith(dir))) return resolved;
        return { errors: [{ text: `${JSON.stringify(args.path)} is outside the project` }] };
      });
    },
  };
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** CSS modules scoped and Tailwind stylesheets compiled before esbuild reads them. */
function sources(root: string, options: StyleBundleOptions, read: Set<string>): esbuild.Plugin {
  return {
    name: "stylesheet-sources",
    setup(build) {
      build.onLoad({ filter: /\.css$/i }, async ({ path }) => {
        const sheet = fromRoot(root, path);
        if (isCssModule(path)) {
          const module = options.modules.get(sheet);
          return css(module.code, module.map, path);
        }
        const text = await readFile(path, "utf8");
        if (!isTailwind(text)) return undefined;
        const compiled = await options.tailwind.compile(sheet, text, options.scanned);
        for (const file of compiled.dependencies) read.add(file);
        return css(compiled.code, compiled.map, path);
      });
    },
  };
}

/** Contents for esbuild, with their source map inline: esbuild maps through it to the sources. */
function css(code: string, map: string, path: string): esbuild.OnLoadResult {
  const inline = `/*# sourceMappingURL=data:application/json;base64,${base64(map)} */`;
  return { contents: `${code}\n${inline}\n`, loader: "css", resolveDir: dirname(path) };
}

function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
