/**
 * @module
 * The esbuild plugin that resolves the project's own import-map aliases for the browser build as
 * Deno resolves them: `"shell/runtime"`, `"@/components/Card.tsx"` - every entry of `deno.json`'s
 * `imports` whose target is a path in the project. An exact key maps one specifier; a key ending
 * in `/` maps every specifier it begins, the longest such key winning (the import-map standard).
 * Entries that name packages (`npm:`) are left to esbuild, which finds the same packages in
 * `node_modules` (Deno's `nodeModulesDir`). `deno.json` is read at the start of every build, so a
 * long-lived dev context sees an edited map. The server's entry points (`"shell"`, `"shell/data"`,
 * ...) are refused here, at the import that reaches them, with what to import instead: left to
 * esbuild, they fail deep inside the framework (`lib/cache/hint_channel.ts: Could not resolve
 * "node:worker_threads"`), naming neither the app's import nor the way out.
 */
import type * as esbuild from "esbuild";
import { readFile } from "node:fs/promises";
import { join, sep } from "node:path";

interface Aliases {
  exact: Map<string, string>;
  /** Longest key first. */
  prefixes: [string, string][];
}

/** The project's local aliases, from `deno.json` under `root`. */
export async function localAliases(root: string): Promise<Aliases> {
  const config = JSON.parse(await readFile(join(root, "deno.json"), "utf8"));
  const exact = new Map<string, string>();
  const prefixes: [string, string][] = [];
  for (const [key, target] of Object.entries<string>(config.imports ?? {})) {
    if (!/^\.\.?\//.test(target)) continue;
    if (key.endsWith("/")) prefixes.push([key, target]);
    else exact.set(key, target);
  }
  prefixes.sort(([a], [b]) => b.length - a.length);
  return { exact, prefixes };
}

/**
 * The entry points of server code: an island (or a module it imports) reaching one is a mistake.
 */
const SERVER_ENTRY_POINTS = new Set([
  "./lib/mod.ts",
  "./lib/data.ts",
  "./lib/server.ts",
  "./lib/auth.ts",
  "./lib/testing.ts",
]);

/** The project path `specifier` is an alias of (`./lib/runtime.ts`), if it is one. */
export function resolveAlias({ exact, prefixes }: Aliases, specifier: string): string | undefined {
  const target = exact.get(specifier);
  if (target !== undefined) return target;
  const prefix = prefixes.find(([key]) => specifier.startsWith(key));
  return prefix && prefix[1] + specifier.slice(prefix[0].length);
}

export function importMap(root: string): esbuild.Plugin {
  let aliases: Aliases = { exact: new Map(), prefixes: [] };
  return {
    name: "import-map",
    setup(build) {
      build.onStart(async () => {
        aliases = await localAliases(root);
      });
      // Relative and absolute paths are never aliases; nor is what a package imports: Deno
      // resolves an npm package's imports as Node does, without the project's map.
      build.onResolve({ filter: /^[^./]/ }, async ({ path, kind, importer, pluginData }) => {
        if (importer.includes(`${sep}node_modules${sep}`)) return undefined;
        const target = resolveAlias(aliases, path);
        if (target === undefined) return undefined;
        if (SERVER_ENTRY_POINTS.has(target)) {
          return {
            errors: [{
              text:
                `"${path}" is server code, which the browser cannot load, and an island imports ` +
                `this module (or one that imports it). Islands import the framework from ` +
                `"shell/runtime" (httpError for an error catalogue, ActionError, recover, ` +
                `useLiveCollection...) and types with ` +
                `\`import type\` (docs/islands.md).`,
            }],
          };
        }
        // Resolved again from the root, through every plugin: an aliased `"use server"` module
        // still becomes its stub.
        return await build.resolve(target, { kind, importer, resolveDir: root, pluginData });
      });
    },
  };
}
