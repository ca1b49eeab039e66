/**
 * @module
 * Static files: `static/` and the build's hashed assets under `/_app/`, served with Hono's Deno
 * `serveStatic`. The file list and ETags are read once at start-up, so a request for a page costs a
 * map lookup, and only a path that names a listed file ever reaches the file system: `..`, encoded
 * or not, cannot escape.
 */
import type { MiddlewareHandler } from "hono";
import { etag } from "hono/etag";
import { serveStatic } from "hono/deno";
import { join } from "node:path";

const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "public, max-age=0, must-revalidate";

/** URL path → its handler, for every file below `dir`, mounted at `prefix`. */
function listFiles(dir: string, prefix: string, cacheControl: string) {
  const files = new Map<string, MiddlewareHandler>();
  const walk = (folder: string, url: string) => {
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
      if (entry.isDirectory) walk(path, href);
      else if (entry.isFile) {
        const info = Deno.statSync(path);
        const tag = `W/"${info.size.toString(36)}-${(info.mtime?.getTime() ?? 0).toString(36)}"`;
        files.set(
          href,
          serveStatic({
            root: "/",
            path,
            onFound: (_path, c) => {
              c.header("ETag", tag);
              c.header("Cache-Control", cacheControl);
            },
          }),
        );
      }
    }
  };
  walk(dir, prefix);
  return files;
}

/** Serves the files below `dir` at `prefix`; `immutable` for content-hashed names. */
export function staticFiles(dir: string, prefix: string, immutable: boolean): MiddlewareHandler {
  const files = listFiles(dir, prefix, immutable ? IMMUTABLE : REVALIDATE);
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
