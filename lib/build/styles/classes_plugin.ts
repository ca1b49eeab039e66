/**
 * @module
 * The esbuild plugin that gives the browser build what an island's stylesheet imports mean there:
 * a CSS module's class map (the names the server rendered, from `modules.ts`), and nothing for a
 * global stylesheet - the page links the stylesheets themselves (`bundle.ts`), so no script ever
 * injects CSS. Specifiers resolve as Deno resolves them: relative to the module, or through the
 * project's aliases (`@/components/card.module.css`), the build's own entries for stylesheets
 * (`deno_json.ts`) read back as the stylesheet they stand for.
 */
import type * as esbuild from "esbuild";
import { join, relative, resolve, sep } from "node:path";
import { localAliases, resolveAlias } from "../import_map.ts";
import { type CssModules, isCssModule } from "./modules.ts";
import { MODULES_DIR } from "./plan.ts";

const NAMESPACE = "stylesheet";

export function stylesheetImports(root: string, modules: CssModules): esbuild.Plugin {
  let aliases: Awaited<ReturnType<typeof localAliases>> = { exact: new Map(), prefixes: [] };
  return {
    name: "stylesheet-imports",
    setup(build) {
      build.onStart(async () => {
        aliases = await localAliases(root);
      });
      build.onResolve({ filter: /\.css$/i }, ({ path, importer, resolveDir }) => {
        if (importer.includes(`${sep}node_modules${sep}`)) return undefined;
        const isPath = /^\.{0,2}\//.test(path);
        const aliased = isPath ? undefined : resolveAlias(aliases, path);
        if (!isPath && aliased === undefined) return undefined; // a package's: esbuild's to say
        const file = aliased === undefined ? resolve(resolveDir, path) : resolve(root, aliased);
        const sheet = relative(root, file).split(sep).join("/")
          .replace(new RegExp(`^${MODULES_DIR}/(.*)\\.ts$`), "$1");
        return { path: join(root, sheet), namespace: NAMESPACE };
      });
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, ({ path }) => {
        const sheet = relative(root, path).split(sep).join("/");
        if (!isCssModule(sheet)) return { contents: "", loader: "js" };
        const { classes } = modules.get(sheet);
        return { contents: `export default ${JSON.stringify(classes)};`, loader: "js" };
      });
    },
  };
}
