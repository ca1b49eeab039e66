/**
 * @module
 * Sentry debug IDs for the production build's browser chunks, in Sentry's format: each chunk and
 * its source map get one UUID, taken from the chunk's content (an unchanged chunk keeps its ID as
 * it keeps its name). The chunk gets `//# debugId=<id>` at its end, which `sentry-cli sourcemaps
 * upload` reads, and a first line that registers the ID in `globalThis._sentryDebugIds` under a
 * stack captured in the chunk - the browser SDK finds the chunk's URL in that stack and puts the ID
 * in `debug_meta.images` of each event; the map gets `debugId` (and the older `debug_id`) and one
 * more empty line at the start of its mappings. Sentry then resolves a frame by its chunk's ID,
 * whichever URL served it.
 *
 * Written here rather than with `sentry-cli sourcemaps inject` (which works here too): its snippet
 * costs every chunk 160 bytes gzipped, this one under 100, and an island page loads half a dozen
 * chunks within a budget of 75 KB.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const DEBUG_ID_COMMENT = "\n//# debugId=";
const MAPPINGS = '"mappings": "';

/** Gives every script among `files` (relative to `dir`) and its source map a debug ID. */
export async function injectDebugIds(dir: string, files: string[]): Promise<void> {
  await Promise.all(
    files.filter((file) => file.endsWith(".js")).map(async (file) => {
      const path = join(dir, file);
      const code = await readFile(path, "utf8");
      if (code.includes(DEBUG_ID_COMMENT)) return; // a chunk that was kept from an earlier build
      const id = await debugIdOf(code);
      const map = await readFile(`${path}.map`, "utf8");
      await writeFile(`${path}.map`, withDebugId(map, id, path));
      const register = `(globalThis._sentryDebugIds??={})[new Error().stack]="${id}";\n`;
      await writeFile(path, `${register}${code.trimEnd()}\n${DEBUG_ID_COMMENT.slice(1)}${id}\n`);
    }),
  );
}

/**
 * The map with `debugId` and `debug_id`, and one more line at the start of its mappings, written
 * into esbuild's text rather than parsed and printed again: that took half of this step's time on
 * maps of a megabyte or two. The key is found at the top level only: in a string, the quotes
 * around it would be escaped.
 */
function withDebugId(map: string, id: string, path: string): string {
  if (!map.includes(MAPPINGS)) {
    throw new Error(`${path}.map: no \`${MAPPINGS}\` where esbuild writes it`);
  }
  return map.replace(MAPPINGS, `"debugId": "${id}",\n  "debug_id": "${id}",\n  ${MAPPINGS};`);
}

/** A UUID (version 4's layout) from the SHA-256 of the chunk's content. */
async function debugIdOf(code: string): Promise<string> {
  const hash = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(code)),
  );
  hash[6] = (hash[6] & 0x0f) | 0x40;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = [...hash.subarray(0, 16)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}
