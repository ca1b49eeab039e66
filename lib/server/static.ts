/**
 * @module
 * Static files: `static/` and the build's hashed assets under `/_app/`, served with Hono's
 * `serveStatic`, the assets compressed as the browser accepts (the build made the copies). The file
 * list and ETags are read once at start-up, so a request for a page costs a map lookup, and only a
 * path that names a listed file ever reaches the file system: `..`, encoded or not, cannot escape.
 * Names starting with `.` (`.env`, `.git/`) are never listed; any other name is reachable by its
 * URL-encoded path, spaces and non-ASCII letters included.
 */
import type { Context, MiddlewareHandler } from "hono";
import { etag } from "hono/etag";
// Hono's runtime-neutral `serveStatic`, given the one Deno call it needs: `hono/deno`'s wrapper
// would do the same, but that entry also loads Hono's SSG and WebSocket helpers, held in the
// server's heap for good (docs/performance.md, "Memory under load").
import { serveStatic } from "hono/serve-static";
import { join, resolve } from "node:path";

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
  /** Files not to serve: source maps, say, once uploaded to Sentry (`SERVE_SOURCE_MAPS=0`). */
  hidden?: RegExp;
}

const COMPRESSED_COPY = /\.(br|gz)$/;

/**
 * Paths below `dir`, `/`-separated, leaving out every name that starts with a dot (and what is
 * below it). Deno's own calls: `node:fs` would load Node's whole file-system layer for two calls.
 */
function filesBelow(dir: string, below = ""): string[] {
  let entries;
  try {
    entries = [...Deno.readDirSync(join(dir, below))];
  } catch (error) {
    if (error instanceof Deno.errors.NotFound && !below) return [];
    throw error;
  }
  return entries.filter((entry) => !entry.name.startsWith(".")).flatMap((entry) => {
    const path = below ? `${below}/${entry.name}` : entry.name;
    if (entry.isDirectory) return filesBelow(dir, path);
    return entry.isFile ? [path] : [];
  });
}

/**
 * A file's body, or null when it is gone (a compressed copy the build did not make, say) or is no
 * longer a file: a directory opens too, and fails only when read, after a 200 went out. One
 * `fstat` of the open file, where `hono/deno` made a `stat` of the path.
 */
async function content(path: string): Promise<ReadableStream<Uint8Array> | null> {
  let file: Deno.FsFile | undefined;
  try {
    file = await Deno.open(path);
    if ((await file.stat()).isFile) return file.readable;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) console.warn(`${error}`);
  }
  file?.close();
  return null;
}

/** The body a request's `serveStatic` opened last. */
const opened = new WeakMap<Context, ReadableStream<Uint8Array>>();

/**
 * `body` is now the one `serveStatic` sends: with `precompressed`, it opens the file and then, for
 * a client that takes br or gzip, its copy, which replaces it - so the file opened before is
 * closed here (else its descriptor stayed open until V8 collected the stream: one per compressed
 * asset a browser loaded).
 */
function replaced(c: Context, body: ReadableStream<Uint8Array>): void {
  opened.get(c)?.cancel().catch(() => {});
  opened.set(c, body);
}

/** URL path (decoded, as `staticPath` gives it) -> its handler; an earlier mount wins. */
function listFiles(mounts: StaticMount[]) {
  const files = new Map<string, MiddlewareHandler>();
  const revalidate = etag();
  for (const mount of mounts) {
    for (const file of filesBelow(mount.dir)) {
      const url = `${mount.prefix}/${file}`;
      if (files.has(url) || (mount.precompressed && COMPRESSED_COPY.test(file))) continue;
      if (mount.hidden?.test(file)) continue;
      const path = resolve(mount.dir, file); // absolute: serveStatic reads it below root "/"
      const info = Deno.statSync(path);
      // Weak: the compressed copies are the same content, and share it.
      const tag = `W/"${info.size.toString(36)}-${(info.mtime?.getTime() ?? 0).toString(36)}"`;
      const cacheControl = mount.immutable ? IMMUTABLE : REVALIDATE;
      const serve = serveStatic({
        root: "/",
        path,
        join,
        getContent: async (path, c) => {
          const body = await content(path);
          if (body) replaced(c, body);
          return body;
        },
        precompressed: mount.precompressed,
        onFound: (_path, c) => {
          c.header("ETag", tag);
          c.header("Cache-Control", cacheControl);
          if (mount.precompressed) c.header("Vary", "Accept-Encoding");
        },
      });
      files.set(url, async (c, next) => {
        await revalidate(c, async () => {
          const res = await serve(c, next);
          if (res) c.res = res;
        });
        // Hono drops the body of an answer to HEAD unread: the file is closed now, not once V8
        // collects the stream (1,500 HEADs ran a process with 256 descriptors out of them).
        if (c.req.method === "HEAD") c.res.body?.cancel().catch(() => {});
        return c.res;
      });
    }
  }
  return files;
}

/**
 * The request's path with every segment decoded: Hono's `c.req.path` keeps escapes of reserved
 * characters (`%2B`, `%23`), which a file's name may hold. Undefined when it cannot name a file.
 */
function staticPath(c: Context): string | undefined {
  const path = c.req.path;
  if (!path.includes("%")) return path;
  try {
    const segments = path.split("/").map(decodeURIComponent);
    return segments.some((segment) => segment.includes("/")) ? undefined : segments.join("/");
  } catch {
    return undefined; // not valid percent-encoding: no file has such a name
  }
}

/**
 * The handler of the file a GET or HEAD request names below one of the mounts (at its prefix), or
 * undefined: one lookup, made for every request by the app's request frame (`frame.ts`).
 */
export function staticFiles(
  ...mounts: StaticMount[]
): (c: Context) => MiddlewareHandler | undefined {
  const files = listFiles(mounts);
  return (c) => {
    if (c.req.method !== "GET" && c.req.method !== "HEAD") return undefined;
    const path = staticPath(c);
    return path === undefined ? undefined : files.get(path);
  };
}
