/**
 * @module
 * One session of `cachedBuild` (`lib/build/vendor_cache.ts`) in a process of its own, for the test
 * of sessions at once: run with the project root, it says `ready` once loaded, waits for a line on
 * standard input - the barrier that starts every session together - then builds `FILES` files into
 * the cache (`cache/bundle-<key>/`, made from `src.txt`) and exits 0 if all went well.
 */
import { join } from "node:path";
import { cachedBuild } from "../../lib/build/vendor_cache.ts";

/** Enough files that writing them takes a while, and sessions overlap. */
export const FILES = 600;

/** The content each session builds for file `i`: the same in every session, as for one key. */
export function contentOf(i: number): string {
  return `export const file${i} = "${"x".repeat(512)}";\n`;
}

if (import.meta.main) {
  const root = Deno.args[0];
  const outdir = join(root, "out");
  console.log("ready");
  await Deno.stdin.readable.getReader().read();
  const outputs = await cachedBuild(
    { root, folder: "cache", name: "bundle", sources: ["src.txt"], outdir },
    () =>
      Promise.resolve(Array.from({ length: FILES }, (_, i) => ({
        path: join(outdir, `part${i % 10}`, `file${i}.js`),
        contents: new TextEncoder().encode(contentOf(i)),
      }))),
  );
  if (outputs.length !== FILES) throw new Error(`${outputs.length} outputs of ${FILES}`);
}
