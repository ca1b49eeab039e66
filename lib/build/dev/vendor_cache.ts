/**
 * @module
 * Dev only: the vendor modules (`vendor.ts`) kept on disk between sessions, each build under
 * `_build/dev/vendor/<name>-<key>/`, the key a hash of what it is made from (the locked package
 * versions, esbuild's version, the given sources). A session that finds its key reads the files —
 * milliseconds — rather than build them, which costs a few hundred, on the CPU the first start
 * needs.
 */
import * as esbuild from "esbuild";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { filesBelow } from "../files.ts";

export interface Output {
  path: string;
  contents: Uint8Array;
}

/** `build`'s outputs (paths below `outdir`), from the cache when `sources` are unchanged. */
export async function cachedBuild(
  root: string,
  name: string,
  sources: string[],
  outdir: string,
  build: () => Promise<Output[]>,
): Promise<Output[]> {
  const cache = join(root, "_build/dev/vendor");
  const dir = join(cache, `${name}-${await keyOf(root, sources)}`);
  const files = await filesBelow(dir);
  if (files.length > 0) {
    return await Promise.all(
      files.map(async (file) => ({
        path: join(outdir, file),
        contents: await readFile(join(dir, file)),
      })),
    );
  }
  const outputs = await build();
  // Whole or not at all: another session may be reading or writing the same.
  const temporary = `${dir}.${crypto.randomUUID()}`;
  for (const output of outputs) {
    const file = join(temporary, relative(outdir, output.path));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, output.contents);
  }
  await rename(temporary, dir).catch(() => rm(temporary, { recursive: true }));
  for (const entry of await readdir(cache)) {
    if (entry.startsWith(`${name}-`) && join(cache, entry) !== dir) {
      await rm(join(cache, entry), { recursive: true, force: true });
    }
  }
  return outputs;
}

async function keyOf(root: string, sources: string[]): Promise<string> {
  const hash = createHash("sha256").update(esbuild.version);
  for (const source of ["deno.lock", ...sources]) {
    const path = join(root, source);
    const info = await stat(path).catch(() => undefined); // a project need not lock its packages
    if (!info) continue;
    const files = info.isDirectory()
      ? (await filesBelow(path)).map((file) => join(path, file))
      : [path];
    for (const file of files) hash.update(relative(root, file)).update(await readFile(file));
  }
  return hash.digest("hex").slice(0, 16);
}
