/**
 * @module
 * Compressed copies of the built scripts and stylesheets (`x.js.br`, `x.js.gz`) beside them, made
 * once here so that serving them costs no compression at all: the static files middleware sends the
 * one the browser accepts (`Content-Encoding`), a third of the bytes or less. Brotli at quality 9:
 * 11 would save another 7% for six times the build time. A script whose copies hold its bytes
 * already (a chunk kept from an earlier build) is left alone: checking costs a gunzip, compressing
 * a brotli pass.
 */
import { Buffer } from "node:buffer";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants, gunzip, gzip } from "node:zlib";

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);
const gunzipped = promisify(gunzip);

/**
 * Compresses the `files` (relative to `dir`) that are scripts or stylesheets; returns the copies'
 * names.
 */
export async function precompress(dir: string, files: string[]): Promise<string[]> {
  const scripts = files.filter((file) => /\.(js|css)$/.test(file));
  await Promise.all(scripts.map(async (name) => {
    const path = join(dir, name);
    const source = await readFile(path);
    if (await holds(`${path}.gz`, source)) return;
    const [br, gz] = await Promise.all([
      brotli(source, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: 9,
          [constants.BROTLI_PARAM_SIZE_HINT]: source.byteLength,
        },
      }),
      gzipped(source, { level: 9 }),
    ]);
    // The gzip copy last: its presence says both are complete.
    await writeFile(`${path}.br`, br);
    await writeFile(`${path}.gz`, gz);
  }));
  return scripts.flatMap((name) => [`${name}.br`, `${name}.gz`]);
}

/** Whether the gzip copy at `path` exists and decompresses to `source`. */
async function holds(path: string, source: Uint8Array): Promise<boolean> {
  try {
    return Buffer.from(await gunzipped(await readFile(path))).equals(source);
  } catch {
    return false; // no copy yet, or a broken one
  }
}
