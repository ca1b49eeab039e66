/**
 * @module
 * The server's Sentry SDK as two modules (`_build/server-sdk/`, loaded by `sentry/sdk.ts` and
 * `sentry/sdk_tracing.ts` in production), a process loading one of them: `sdk.js`, errors only,
 * from `sentry/sdk_entry.ts`, and `sdk_tracing.js`, the SDK's own tracing as well, from
 * `sentry/sdk_tracing_entry.ts`. Each bundled with `@sentry/deno` and `@sentry/core`, tree-shaken,
 * minified, the SDK's debug logging compiled out (`__SENTRY_DEBUG__`, as the SDK's own bundles
 * do). Not split into a shared chunk: esbuild puts a file into the chunk of every entry whose
 * imports reach it, and both reach all of the SDK through its packages' index modules. What a
 * Sentry-on server holds is then some 80 KB of code on Deno's OpenTelemetry, 180 KB with the SDK's
 * tracing, rather than the sources and bytecode of four hundred modules.
 * `@opentelemetry/api` stays an import, so that the SDK and Deno's tracing share its one global
 * registration. Kept between builds like the browser's prebundle (`vendor_cache.ts`): made again
 * only when the locked packages, esbuild or these files change.
 */
import * as esbuild from "esbuild";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { cachedBuild } from "./vendor_cache.ts";

const ENTRIES = { sdk: "lib/sentry/sdk_entry.ts", sdk_tracing: "lib/sentry/sdk_tracing_entry.ts" };
/** The folder below the build's output, its files replaced by each build. */
const SERVER_SDK_DIR = "server-sdk";

/** Writes the bundles into `<outDir>/server-sdk/` (outDir relative to root). */
export async function buildServerSdk(root: string, outDir: string): Promise<void> {
  const outdir = join(root, outDir, SERVER_SDK_DIR);
  const files = await cachedBuild({
    root,
    folder: `${outDir}/vendor`,
    name: "server-sdk",
    sources: [...Object.values(ENTRIES), "lib/build/sentry_server_sdk.ts"],
    outdir,
  }, async () => {
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: Object.fromEntries(
        Object.entries(ENTRIES).map(([name, entry]) => [name, join(root, entry)]),
      ),
      outdir,
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
  // File by file, each whole: another build may be writing the same files, a server loading them.
  await mkdir(outdir, { recursive: true });
  for (const file of files) {
    const temporary = `${file.path}.${crypto.randomUUID()}`;
    await writeFile(temporary, file.contents);
    await rename(temporary, file.path);
  }
}
