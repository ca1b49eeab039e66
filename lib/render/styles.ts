/**
 * @module
 * Links stylesheets in `<head>`: React's `preinit` of each, in one precedence, so React writes them
 * into `<head>` in the order asked, each once however often it is asked for, and - for a part that
 * streams in after the shell - has the browser load it before that part shows. The page's own come
 * first (the build's list: `_app`'s, its layouts', its own), then each island's as it renders.
 */
import { preinit } from "react-dom";

/** One precedence for all: their order is the order they are asked for. */
const PRECEDENCE = "app";

export function linkStylesheets(hrefs: readonly string[] | undefined): void {
  for (const href of hrefs ?? []) preinit(href, { as: "style", precedence: PRECEDENCE });
}

/** Renders nothing: links the page's stylesheets, before anything else of the page renders. */
export function Stylesheets({ hrefs }: { hrefs?: readonly string[] }): null {
  linkStylesheets(hrefs);
  return null;
}
