/**
 * @module
 * How a page and the server tell each other which build they are, so that a tab opened before a
 * deploy notices it is out of date (`client/versions.ts`), a call it makes to an action the new
 * build no longer has is told so plainly (`actions/stale.ts`), and its event streams are not fed
 * the new build's events (`use_feed.ts`). Browser-safe.
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
/**
 * `GET` here answers with the build that serves now (as text and `App-Build`): a cheap question.
 */
export const BUILD_PATH = "/_build";
/**
 * The event every event stream sends first, its data the build serving it (reserved): a page's
 * stream that reconnected to another build than the page's stops there, and the page moves to it.
 */
export const BUILD_EVENT = "app-build";
/**
 * Dispatched on `window` by a page that learnt another build serves (its `detail`), where only the
 * boot runtime can move the page: `useFeed` lives in the islands' bundle.
 */
export const OUTDATED_EVENT = "app-outdated";
