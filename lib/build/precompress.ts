/**
 * @module
 * Compressed copies of the built scripts (`x.js.br`, `x.js.gz`) beside them, made once here so that
 * serving them costs no compression at all: the static files middleware sends the one the browser
 * accepts (`Content-Encoding`), a third of the bytes or less. Brotli at quality 9: 11 would save
 * another 7% for six times the build time. A script whose copies exist already (its content-hashed
 * name says it is the same) is left alone.
 */
import { access, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** Compresses the `files` (relative to `dir`) that are scripts; returns the copies' names. */
export async function precompress(dir: string, files: string[]): Promise<string[]> {
  const scripts = files.filter((file) => file.endsWith(".js"));
  await Promise.all(scripts.map(async (name) => {
    const path = join(dir, name);
    if (await access(`${path}.gz`).then(() => true, () => false)) return;
    const source = await readFile(path);
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
