/**
 * @module
 * The server's Sentry SDK as one module (`_build/server-sdk.js`, loaded by `sentry/sdk.ts` in
 * production): `sentry/sdk_entry.ts` bundled with `@sentry/deno` and `@sentry/core`, tree-shaken
 * and minified, the SDK's debug logging compiled out (`__SENTRY_DEBUG__`, as the SDK's own
 * bundles do). What a Sentry-on server holds is then about 180 KB of code rather than the sources
 * and bytecode of four hundred modules: 10-12 MB of memory less, measured. `@opentelemetry/api`
 * stays an import, so that the SDK and Deno's tracing share its one global registration. Kept
 * between builds like the browser's prebundle (`vendor_cache.ts`): made again only when the locked
 * packages, esbuild or these two files change.
 */
import * as esbuild from "esbuild";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { cachedBuild } from "./vendor_cache.ts";

const ENTRY = "lib/sentry/sdk_entry.ts";
export const SERVER_SDK_FILE = "server-sdk.js";

/** Writes the bundle into `outDir` (relative to root). */
export async function buildServerSdk(root: string, outDir: string): Promise<void> {
  const outdir = join(root, outDir);
  const [sdk] = await cachedBuild({
    root,
    folder: `${outDir}/vendor`,
    name: "server-sdk",
    sources: [ENTRY, "lib/build/sentry_server_sdk.ts"],
    outdir,
  }, async () => {
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: [join(root, ENTRY)],
      outfile: join(outdir, SERVER_SDK_FILE),
      bundle: true,
      format: "esm",
      platform: "node",
      target: "esnext",
      minify: true,
      define: { __SENTRY_DEBUG__: "false" },
      external: ["node:*", "@opentelemetry/api"],
      write: false,
      logLevel: "silent",
    });
    return result.outputFiles;
  });
  await writeFile(join(outdir, SERVER_SDK_FILE), sdk.contents);
}
