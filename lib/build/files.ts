/**
 * @module
 * The files below a folder, for the build: `node:fs/promises`' recursive `readdir`, as paths
 * relative to the folder with `/` separators, sorted so that builds are reproducible.
 */
import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";

/** Files below `dir` (none if it does not exist). */
export async function filesBelow(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join("/"))
    .sort();
}
