/**
 * @module
 * Earlier builds' assets for tabs opened before a deploy (`kv/asset_store.ts`). At start-up the
 * app keeps this build's files in KV (`keepBuildAssets`: the scripts, stylesheets and, when they
 * are served, source maps the build wrote, as its manifest lists them), and a running server
 * refreshes them before they expire. `keptAssets` serves a file from there when this server's disk
 * has none of that name: only under `/_app/`, only a name as the build makes them
 * (`name-HASH.js`, `.css`, their `.map`), by one KV read, never a listing; immutable, gzip as
 * stored (or unpacked for a client that takes none).
 */
import type { MiddlewareHandler } from "hono";
import { getMimeType } from "hono/utils/mime";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { type AssetRetention, keepAssets, type KeepResult, readAsset } from "../kv/asset_store.ts";
import { internalsOf } from "./internals.ts";
import { log } from "./log.ts";
import type { Manifest } from "./manifest.ts";

export type { AssetRetention };

const gzipped = promisify(gzip);

/** Where the build's assets are served from; the manifest names them by these URLs. */
const PREFIX = "/_app/";

/**
 * A name the build gives an asset: folders and a name ending in esbuild's 8-character hash, a
 * script or stylesheet or their source map. Nothing else is ever looked up.
 */
const HASHED = /^\/_app\/(?:[\w.-]{1,100}\/){0,8}[\w.-]{1,150}-[A-Z0-9]{8}\.(?:js|css)(?:\.map)?$/;

export interface KeepOptions {
  kv: Deno.Kv;
  /** The project root: the build's files are below it, in `manifest.assetDir`. */
  root: string;
  manifest: Manifest;
  retention: AssetRetention;
  /** Whether source maps are served, and so kept. */
  sourceMaps: boolean;
}

/** Keeps this build's files in KV (see `kv/asset_store.ts`: once per build, bounded). */
export function keepBuildAssets(options: KeepOptions): Promise<KeepResult> {
  const { kv, root, manifest, retention, sourceMaps } = options;
  const dir = join(root, manifest.assetDir);
  const urls = (manifest.assets.files ?? []).filter((url) => sourceMaps || !url.endsWith(".map"));
  const files = urls.map((url) => ({
    url,
    async gzipped() {
      const path = join(dir, url.slice(PREFIX.length));
      // The build's own copy when it made one (scripts and stylesheets); maps are packed here.
      const copy = await Deno.readFile(`${path}.gz`).catch(() => undefined);
      if (copy) return copy;
      const file = await Deno.readFile(path).catch(() => undefined);
      // Gone from the disk (a test that loses a chunk): nothing to keep.
      return file && await gzipped(file, { level: 9 });
    },
  }));
  return keepAssets(kv, manifest.buildId, files, retention);
}

/** How often a running server writes its build's files again, as they near their expiry. */
const REFRESH_MS = 12 * 60 * 60 * 1000;

/**
 * Keeps this build's files now, and again every 12 hours while `closing` has not aborted (a timer
 * that keeps no process alive). Resolves once the first keeping is done; never rejects: a store
 * that fails is logged (`warn`), and the app serves all the same.
 */
export function keepWhileRunning(options: KeepOptions, closing: AbortSignal): Promise<void> {
  const keep = () =>
    keepBuildAssets(options).then(
      (result) => {
        if (result.done !== "now") return;
        const { written, bytes, evicted, left } = result;
        const fields = { build: options.manifest.buildId, written, bytes, evicted, left };
        if (left.length > 0) {
          log("warn", "not every asset of this build fits in ASSET_RETENTION_BYTES", fields);
        } else log("info", "this build's assets are kept in KV for tabs of earlier pages", fields);
      },
      (error) =>
        log("warn", "this build's assets could not be kept in KV", {
          build: options.manifest.buildId,
          error: String(error),
        }),
    );
  const timer = setInterval(keep, Math.min(REFRESH_MS, options.retention.ms / 2));
  Deno.unrefTimer(timer);
  closing.addEventListener("abort", () => clearInterval(timer), { once: true });
  return keep();
}

/** Serves a build's asset from KV when no file of the disk answered it. */
export function keptAssets(kv: Deno.Kv, options: { sourceMaps: boolean }): MiddlewareHandler {
  return async function keptAssets(c, next) {
    const path = c.req.path;
    if (
      (c.req.method !== "GET" && c.req.method !== "HEAD") || !HASHED.test(path) ||
      (!options.sourceMaps && path.endsWith(".map"))
    ) {
      return next();
    }
    const asset = await readAsset(kv, path);
    if (!asset) return next();
    const tag = `"${asset.hash.slice(0, 32)}"`;
    const headers = new Headers({
      "Content-Type": getMimeType(path) ?? "application/octet-stream",
      "Cache-Control": "public, max-age=31536000, immutable",
      ETag: tag,
      Vary: "Accept-Encoding",
    });
    if (c.req.header("if-none-match") === tag || c.req.method === "HEAD") {
      await asset.body.cancel();
      const status = c.req.method === "HEAD" ? 200 : 304;
      return c.body(null, status, Object.fromEntries(headers));
    }
    // Its parts past the first batch are read from KV as it is sent: in flight until then, or a
    // stop closed the store under it and the client got a cut body.
    internalsOf(c).ownBody = true;
    if (acceptsGzip(c.req.header("accept-encoding"))) {
      headers.set("Content-Encoding", "gzip");
      headers.set("Content-Length", String(asset.bytes));
      return new Response(asset.body, { headers });
    }
    return new Response(asset.body.pipeThrough(new DecompressionStream("gzip")), { headers });
  };
}

/** Whether `Accept-Encoding` takes gzip (`gzip;q=0` refuses it). */
function acceptsGzip(header: string | undefined): boolean {
  for (const part of (header ?? "").split(",")) {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    if (coding !== "gzip" && coding !== "*") continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}
