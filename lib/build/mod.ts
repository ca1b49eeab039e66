/**
 * @module
 * The build: scan `routes/` and `islands/`, bundle the browser side (and, for production, compress
 * it), write the manifest and the fingerprint of the sources it was made from.
 */
import { join } from "node:path";
import { BUILD_DIR, fingerprint, ignoreNotFound } from "./fingerprint.ts";
import { scanActions } from "./actions.ts";
import { bundle } from "./bundle.ts";
import { manifestSource } from "./manifest_file.ts";
import { precompress } from "./precompress.ts";
import { scan } from "./scan.ts";

const ASSET_DIR = `${BUILD_DIR}/static`;

export interface BuildOptions {
  root: string;
  dev: boolean;
}

export async function build({ root, dev }: BuildOptions): Promise<void> {
  const found = await scan(root);
  const actions = await scanActions(root);
  // A "use server" module under routes/ holds actions, not a route.
  found.routes = found.routes.filter((r) => !actions.some((a) => a.file === `routes/${r.file}`));
  await Deno.remove(join(root, ASSET_DIR), { recursive: true }).catch(ignoreNotFound);
  await Deno.mkdir(join(root, BUILD_DIR), { recursive: true });
  const assets = await bundle({ root, outDir: ASSET_DIR, islands: found.islands, actions, dev });
  if (!dev) await precompress(join(root, ASSET_DIR));
  const source = manifestSource(found, assets, ASSET_DIR, actions);
  await Deno.writeTextFile(join(root, BUILD_DIR, "manifest.gen.ts"), source);
  await Deno.writeTextFile(join(root, BUILD_DIR, "fingerprint"), await fingerprint(root, dev));
}
