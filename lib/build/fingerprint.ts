/**
 * @module
 * A hash of everything a build is made from, so `deno task start` rebuilds exactly when a file
 * under `routes/`, `islands/` or `lib/` changed, was added or removed. Kept apart from the build
 * so that checking costs no esbuild import.
 */
import { createHash } from "node:crypto";
import { join, relative } from "node:path";

export const BUILD_DIR = "_build";
const SOURCES = ["routes", "islands", "lib", "deno.json"];

export async function fingerprint(root: string, dev: boolean): Promise<string> {
  const hash = createHash("sha256").update(dev ? "dev\n" : "prod\n");
  const visit = async (path: string) => {
    const info = await Deno.stat(path).catch(ignoreNotFound);
    if (!info) return;
    if (info.isDirectory) {
      const names = [];
      for await (const entry of Deno.readDir(path)) names.push(entry.name);
      for (const name of names.sort()) await visit(join(path, name));
    } else {
      hash.update(`${relative(root, path)}\n`).update(await Deno.readFile(path));
    }
  };
  for (const source of SOURCES) await visit(join(root, source));
  return hash.digest("hex");
}

/** True when the sources (or the mode) changed since the last build, or there was none. */
export async function isStale(root: string, dev: boolean): Promise<boolean> {
  const last = await Deno.readTextFile(join(root, BUILD_DIR, "fingerprint")).catch(ignoreNotFound);
  return last !== await fingerprint(root, dev);
}

export function ignoreNotFound(error: unknown): undefined {
  if (!(error instanceof Deno.errors.NotFound)) throw error;
  return undefined;
}
