/**
 * @module
 * The folder of `routes/` an unknown URL is in, so that the URL meets that folder's `_middleware`
 * chain (root first) and error page as a page there would, before the not-found page: a guarded
 * folder's refusal (a redirect to sign in, 403) then tells nobody which of its URLs exist. Each
 * folder is a route of Hono's for every URL at or below its pages' (after the pages, which answer
 * first), so its middleware sees the URL's params as a page's would (`c.req.param("team")` for
 * `teams/[team]/`); the deepest folder is registered first, and the first to answer wins. A URL in
 * no such folder meets the root's chain, as Hono's `notFound`.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import { every } from "hono/combine";
import { internalsOf } from "./internals.ts";
import { type Manifest, type ManifestFolder, middlewaresOf } from "./manifest.ts";
import { type Telemetry, tracedMiddleware } from "./telemetry.ts";

declare module "./internals.ts" {
  interface Internals {
    /** The folder of an unknown URL: its error page answers the request's expected errors. */
    folder: ManifestFolder;
  }
}

/**
 * Registers, after the routes, each folder's chain and then `answer` (the not-found page) unless a
 * middleware answered; and the root's chain, then `answer`, for the URLs in no folder.
 */
export function registerFolders(
  app: Hono,
  manifest: Manifest,
  answer: (c: Context) => Promise<Response>,
  telemetry?: Telemetry,
): void {
  const depth = ({ pattern }: ManifestFolder) => pattern.split("/").length;
  // Deepest first, then the manifest's order (most specific first): sort is stable.
  for (const folder of manifest.folders.toSorted((a, b) => depth(b) - depth(a))) {
    const chain = tracedMiddleware(folder.middlewares.flatMap(middlewaresOf), telemetry);
    // `/*` also takes the folder's own URL; a catch-all's pattern takes every depth already.
    const pattern = folder.pattern.endsWith("{.+}") ? folder.pattern : `${folder.pattern}/*`;
    app.all(pattern, inFolder(folder), ...chain, answer);
  }
  const root = tracedMiddleware(manifest.rootMiddlewares.flatMap(middlewaresOf), telemetry);
  const rootChain = root.length ? every(...root) : undefined;
  app.notFound(async (c) => {
    if (!rootChain) return await answer(c);
    await rootChain(c, async () => {
      c.res = await answer(c);
    });
    return c.res;
  });
}

function inFolder(folder: ManifestFolder): MiddlewareHandler {
  return function folderOf(c, next) {
    internalsOf(c).folder = folder;
    return next();
  };
}
