/**
 * @module
 * Builds of the packages kept on disk between runs - dev's vendor modules (`dev/vendor.ts`), the
 * browser SDK's prebundle (`sentry_prebundle.ts`) - each under `<folder>/<name>-<key>/`, the key a
 * hash of what it is made from (the locked package versions, esbuild's version, the given
 * sources). A run that finds its key reads the files - milliseconds - rather than build them,
 * which costs a few hundred. Builds of one project may run at once (two `deno task build`s, a dev
 * server and a build, CI runs sharing a cache folder): each writes its own temporary folder and
 * renames it into place, and removes only its own leftovers, older entries and temporary folders
 * old enough that no live session can still be writing them. A session reading an entry another
 * removes (its key's sources differ) builds it again.
 */
import * as esbuild from "esbuild";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { filesBelow } from "./files.ts";

export interface Output {
  path: string;
  contents: Uint8Array;
}

export interface CachedBuild {
  root: string;
  /** The cache's folder, relative to root. */
  folder: string;
  /** No two builds in one folder have names that start alike: the older entries go by name. */
  name: string;
  /** What the build is made from besides the packages: files or folders, relative to root. */
  sources: string[];
  outdir: string;
}

/** An entry holds its outputs in a folder, beside the list of them. */
const OUTPUTS = "outputs";
const LIST = "list.json";
/** Changes the keys when the entries' layout changes: entries of an older one are removed. */
const LAYOUT = "2";

/**
 * How old another session's temporary folder must be to count as a dead session's: writing one
 * takes milliseconds once its build is done.
 */
const STALE_MS = 60 * 60 * 1000;

/** `build`'s outputs (paths below `outdir`), from the cache when `sources` are unchanged. */
export async function cachedBuild(
  { root, folder, name, sources, outdir }: CachedBuild,
  build: () => Promise<Output[]>,
): Promise<Output[]> {
  const cache = join(root, folder);
  const dir = join(cache, `${name}-${await keyOf(root, sources)}`);
  const stored = await readEntry(dir, outdir);
  if (stored) return stored;
  const outputs = await build();
  // Whole or not at all: another session may be reading or writing the same.
  const temporary = `${dir}.${crypto.randomUUID()}`;
  try {
    const files = outputs.map((output) => relative(outdir, output.path));
    for (const [i, output] of outputs.entries()) {
      const file = join(temporary, OUTPUTS, files[i]);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, output.contents);
    }
    await writeFile(join(temporary, LIST), JSON.stringify(files));
    await rename(temporary, dir).catch(async (error) => {
      // Lost to another session's rename: the same key, so the same files.
      if ((await filesBelow(dir)).length === 0) throw error;
    });
  } finally {
    await rm(temporary, { recursive: true, force: true });
  }
  await removeOlder(cache, name, dir);
  return outputs;
}

/**
 * The outputs stored in `dir`, or none if it is missing - or is being removed, by a session that
 * stored another key: then the build is made again. Its list says which files make it whole, which
 * a listing of the folder half-way through its removal would not.
 */
async function readEntry(dir: string, outdir: string): Promise<Output[] | undefined> {
  try {
    const files: string[] = JSON.parse(await readFile(join(dir, LIST), "utf8"));
    return await Promise.all(
      files.map(async (file) => ({
        path: join(outdir, file),
        contents: await readFile(join(dir, OUTPUTS, file)),
      })),
    );
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Removes the other entries of `name` in `cache`, and temporary folders that only a dead session
 * can have left: a live one may be writing them.
 */
async function removeOlder(cache: string, name: string, kept: string): Promise<void> {
  const entry = new RegExp(`^${name}-[0-9a-f]{16}(\\.[0-9a-f-]{36})?$`);
  for (const found of await readdir(cache)) {
    const path = join(cache, found);
    const [whole, temporary] = entry.exec(found) ?? [];
    if (!whole || path === kept) continue;
    if (temporary) {
      const info = await stat(path).catch(() => undefined); // removed meanwhile by its session
      if (!info || Date.now() - info.mtimeMs < STALE_MS) continue;
    }
    await rm(path, { recursive: true, force: true });
  }
}

async function keyOf(root: string, sources: string[]): Promise<string> {
  const hash = createHash("sha256").update(LAYOUT).update(esbuild.version);
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
