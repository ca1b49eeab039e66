/**
 * @module
 * Static files: `static/` and the build's hashed assets under `/_app/`, served with Hono's Deno
 * `serveStatic`, the assets compressed as the browser accepts (the build made the copies). The file
 * list and ETags are read once at start-up, so a request for a page costs a map lookup, and only a
 * path that names a listed file ever reaches the file system: `..`, encoded or not, cannot escape.
 */
import type { MiddlewareHandler } from "hono";
import { etag } from "hono/etag";
import { serveStatic } from "hono/deno";
import { join } from "node:path";

const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "public, max-age=0, must-revalidate";

export interface StaticMount {
  dir: string;
  /** The URL path the folder is served at ("" for the root). */
  prefix: string;
  /** Content-hashed names: cached for good. */
  immutable: boolean;
  /** Files may have compressed copies beside them (`x.js.br`, `x.js.gz`; see build/precompress). */
  precompressed?: boolean;
}

const COMPRESSED_COPY = /\.(br|gz)$/;

/** URL path → its handler, for every file below each mount's folder; an earlier mount wins. */
function listFiles(mounts: StaticMount[]) {
  const files = new Map<string, MiddlewareHandler>();
  const walk = (folder: string, url: string, mount: StaticMount) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(folder)];
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      const href = `${url}/${encodeURIComponent(entry.name)}`;
      if (entry.isDirectory) walk(path, href, mount);
      else if (entry.isFile && !files.has(href)) {
        if (mount.precompressed && COMPRESSED_COPY.test(entry.name)) continue;
        const info = Deno.statSync(path);
        // Weak: the compressed copies are the same content, and share it.
        const tag = `W/"${info.size.toString(36)}-${(info.mtime?.getTime() ?? 0).toString(36)}"`;
        const cacheControl = mount.immutable ? IMMUTABLE : REVALIDATE;
        files.set(
          href,
          serveStatic({
            root: "/",
            path,
            precompressed: mount.precompressed,
            onFound: (_path, c) => {
              c.header("ETag", tag);
              c.header("Cache-Control", cacheControl);
              if (mount.precompressed) c.header("Vary", "Accept-Encoding");
            },
          }),
        );
      }
    }
  };
  for (const mount of mounts) walk(mount.dir, mount.prefix, mount);
  return files;
}

/** Serves the files below each mount's folder at its prefix, all from one lookup. */
export function staticFiles(...mounts: StaticMount[]): MiddlewareHandler {
  const files = listFiles(mounts);
  const revalidate = etag();
  return async function staticFiles(c, next) {
    const serve = files.get(c.req.path);
    if (!serve || (c.req.method !== "GET" && c.req.method !== "HEAD")) return next();
    await revalidate(c, async () => {
      const res = await serve(c, next);
      if (res) c.res = res;
    });
    return c.res;
  };
}
