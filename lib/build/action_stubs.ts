/**
 * @module
 * The esbuild plugin that keeps server actions on the server: in the browser bundle, a
 * `"use server"` module is replaced, whatever imports it, by a stub whose exports call the
 * action over HTTP (`lib/client/actions.ts`). Nothing of the module itself - its code, its
 * imports, its strings - reaches a chunk.
 */
import type * as esbuild from "esbuild";
import { createHash } from "node:crypto";
import { basename, join } from "node:path";
import type { ActionModule } from "./actions.ts";

/** The browser's version of an action module. */
export function stubSource(module: ActionModule): string {
  const lines = [`import { serverAction } from "./actions.ts";`];
  for (const { name, id } of module.exports) {
    const call = `/* @__PURE__ */ serverAction(${JSON.stringify(id)}, ${JSON.stringify(name)})`;
    lines.push(
      name === "default" ? `export default ${call};` : `export const ${name} = ${call};`,
    );
  }
  return lines.join("\n") + "\n";
}

export function actionStubs(root: string, modules: ActionModule[]): esbuild.Plugin {
  const byPath = new Map(modules.map((module) => [join(root, module.file), module]));
  // Deno wants import specifiers with extensions: only these can name an action module.
  const names = [...new Set(modules.map((module) => basename(module.file)))];
  const filter = new RegExp(`(?:^|/)(?:${names.map(escapeRegExp).join("|")})$`);
  return {
    name: "server-action-stubs",
    setup(build) {
      if (modules.length === 0) return;
      build.onResolve({ filter }, async ({ path, pluginData, ...args }) => {
        if (pluginData === RESOLVING) return undefined;
        const resolved = await build.resolve(path, { ...args, pluginData: RESOLVING });
        const module = byPath.get(resolved.path);
        // An opaque path: source maps must not name the module's file either.
        if (module) return { path: stubName(module), namespace: NAMESPACE, pluginData: module };
        return resolved.errors.length > 0 ? undefined : resolved;
      });
      build.onLoad({ filter: /./, namespace: NAMESPACE }, ({ pluginData }) => ({
        contents: stubSource(pluginData),
        loader: "js",
        resolveDir: join(root, "lib", "client"),
      }));
    },
  };
}

const NAMESPACE = "server-action";
const RESOLVING = Symbol("resolving");

function stubName(module: ActionModule): string {
  const ids = module.exports.map((e) => e.id).join(",");
  return createHash("sha256").update(`${module.file}\n${ids}`).digest("base64url").slice(0, 12);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
