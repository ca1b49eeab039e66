/**
 * @module
 * How a page and the server tell each other which build they are, so that a tab opened before a
 * deploy notices it is out of date (`client/versions.ts`) and a call it makes to an action the new
 * build no longer has is told so plainly (`actions/stale.ts`). Browser-safe.
 */

/** `<meta name="app-build" content="...">`: the build that rendered the page, on every page. */
export const BUILD_META = "app-build";
/** The build that answered: on every action response and on `BUILD_PATH`'s. */
export const BUILD_HEADER = "App-Build";
/**
 * On the 410 answering a call to an action the server's build does not have: the call came from a
 * page older than the build (`1`).
 */
export const STALE_HEADER = "App-Stale";
/** `GET` here answers with the build that serves now (as text and `App-Build`): a cheap question. */
export const BUILD_PATH = "/_build";
