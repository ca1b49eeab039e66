/**
 * @module
 * Dev only: React Fast Refresh for esbuild. An `onLoad` plugin runs Babel with
 * `react-refresh/babel` on the app's own `.tsx`/`.jsx` files (never node_modules), leaving
 * TypeScript and JSX to esbuild, and appends a footer that
 *   - scopes `$RefreshReg$`/`$RefreshSig$` to the file (ids are "<file> <component>"),
 *   - hands the module's own namespace (a self-import) to the runtime once it has evaluated, so the
 *     browser can tell whether the file can be swapped in place (`client/dev/refresh_setup.ts`).
 * Babel's source map goes inline; esbuild composes it with its own, so stacks map to the lines
 * as written. The footer only appends: no line moves, and function declarations are hoisted, so
 * Babel's `var _s = $RefreshSig$()` at the top already sees them.
 */
import * as babel from "@babel/core";
import refreshBabel from "react-refresh/babel";
import type * as esbuild from "esbuild";
import { Buffer } from "node:buffer";
import { basename, relative, sep } from "node:path";

export function reactRefresh(root: string): esbuild.Plugin {
  // esbuild's `rebuild()` calls every `onLoad` again, changed file or not: a save must cost one
  // Babel run, not one per file.
  const cache = new Map<string, { source: string; contents: string }>();
  return {
    name: "react-refresh",
    setup(build) {
      build.onLoad({ filter: /\.[jt]sx$/ }, async ({ path }) => {
        if (path.includes(`${sep}node_modules${sep}`)) return undefined;
        const source = await Deno.readTextFile(path);
        const loader = path.endsWith(".jsx") ? "jsx" : "tsx";
        const cached = cache.get(path);
        if (cached?.source === source) return { contents: cached.contents, loader };
        const file = relative(root, path).split(sep).join("/");
        let result;
        try {
          result = await transform(source, path);
        } catch {
          // A syntax error: esbuild reports it in its own words, with file, line and code frame.
          return { contents: source, loader };
        }
        const contents = result.code + footer(file, path) + inlineMap(result.map);
        cache.set(path, { source, contents });
        return { contents, loader };
      });
    },
  };
}

async function transform(source: string, path: string) {
  const result = await babel.transformAsync(source, {
    filename: path,
    babelrc: false,
    configFile: false,
    sourceMaps: true,
    parserOpts: { plugins: ["typescript", "jsx"] },
    // Lines stay where they were, so positions hold even where the map is coarse.
    generatorOpts: { retainLines: true },
    plugins: [[refreshBabel, { skipEnvCheck: true }]],
  });
  return { code: result!.code!, map: result!.map };
}

function footer(file: string, path: string): string {
  const id = JSON.stringify(file);
  return `
import * as __refresh_self__ from ${JSON.stringify(`./${basename(path)}`)};
function $RefreshReg$(type, name) { __REFRESH__.register(type, ${id} + " " + name); }
function $RefreshSig$() { return __REFRESH__.sig(${id}); }
__REFRESH__.evaluated(${id}, __refresh_self__);
`;
}

function inlineMap(map: unknown): string {
  if (!map) return "";
  const base64 = Buffer.from(JSON.stringify(map)).toString("base64");
  return `//# sourceMappingURL=data:application/json;base64,${base64}\n`;
}
