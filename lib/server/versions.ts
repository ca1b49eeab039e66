/**
 * @module
 * What a page and the server say about the build they are (`shared/versions.ts`): every page
 * carries its build in `<meta name="app-build">`, and `GET /_build` answers with the build that
 * serves now - what a tab opened before a deploy asks to tell an island that is out of date from
 * one that is broken (`client/versions.ts`). Both are made once; a request costs nothing more.
 */
import type { Handler } from "hono";
import { createElement, type ReactNode } from "react";
import { BUILD_HEADER, BUILD_META, BUILD_PATH } from "../shared/versions.ts";

/** The page's `<meta>`, which React hoists into `<head>`. */
export function buildMeta(buildId: string): ReactNode {
  return createElement("meta", { name: BUILD_META, content: buildId });
}

/** `GET /_build`'s route: the build id as text and in `App-Build`, never cached. */
export function currentBuild(buildId: string): [string, Handler] {
  const headers = {
    [BUILD_HEADER]: buildId,
    "Cache-Control": "no-store",
    "Content-Type": "text/plain; charset=utf-8",
  };
  return [BUILD_PATH, () => new Response(buildId, { headers })];
}
