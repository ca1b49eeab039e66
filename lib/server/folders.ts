/**
 * @module
 * The folder of `routes/` an unknown URL is in, so that the URL meets that folder's `_middleware`
 * chain (root first) and error page as a page there would, before the not-found page: a guarded
 * folder's refusal (a redirect to sign in, 403) then tells nobody which of its URLs exist. The
 * folder is the deepest of the manifest's `folders` whose pages' URLs the path is at or below,
 * found on Hono's router, built once: no scan of the routes per request, and a long or deep path
 * costs what its routing already did.
 */
import type { Context, MiddlewareHandler, NotFoundHandler } from "hono";
import { every } from "hono/combine";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { SmartRouter } from "hono/router/smart-router";
import { TrieRouter } from "hono/router/trie-router";
import { internalsOf } from "./internals.ts";
import {
  type Manifest,
  type ManifestFolder,
  type MiddlewareModule,
  middlewaresOf,
} from "./manifest.ts";
import { type Telemetry, tracedMiddleware } from "./telemetry.ts";

declare module "./internals.ts" {
  interface Internals {
    /** The folder of an unknown URL: its error page answers the request's expected errors. */
    folder: ManifestFolder;
  }
}

/** A folder, its chain as one middleware (none: nothing to run) and its depth in segments. */
interface Place {
  folder?: ManifestFolder;
  chain?: MiddlewareHandler;
  depth: number;
}

/**
 * Hono's `notFound` handler: the chain of the unknown URL's folder, then `answer` (the not-found
 * page) unless a middleware answered.
 */
export function unmatched(
  manifest: Manifest,
  answer: (c: Context) => Promise<Response>,
  telemetry?: Telemetry,
): NotFoundHandler {
  const placeOf = (
    folder: ManifestFolder | undefined,
    middlewares: MiddlewareModule[],
  ): Place => {
    const chain = tracedMiddleware(middlewares.flatMap(middlewaresOf), telemetry);
    const depth = folder ? folder.pattern.split("/").length - 1 : 0;
    return { folder, chain: chain.length ? every(...chain) : undefined, depth };
  };
  const root = placeOf(undefined, manifest.rootMiddlewares);
  const router = new SmartRouter<Place>({ routers: [new RegExpRouter(), new TrieRouter()] });
  for (const folder of manifest.folders) {
    const place = placeOf(folder, folder.middlewares);
    router.add("ALL", folder.pattern, place);
    // A catch-all folder's pattern already takes every depth below it.
    if (!folder.pattern.endsWith("{.+}")) router.add("ALL", `${folder.pattern}/*`, place);
  }
  const find = (path: string): Place => {
    if (!manifest.folders.length) return root;
    let found = root;
    // Most specific first: a deeper folder wins, then the first of equal depth.
    for (const [place] of router.match("ALL", path)[0]) {
      if (place.depth > found.depth) found = place;
    }
    return found;
  };

  return async (c) => {
    const { folder, chain } = find(c.req.path);
    if (folder) internalsOf(c).folder = folder;
    if (!chain) return await answer(c);
    await chain(c, async () => {
      c.res = await answer(c);
    });
    return c.res;
  };
}
