/**
 * @module
 * Dev only: what `deno task dev` and the dev client in the page say to each other. Events on the
 * stream at `EVENTS_PATH`, by name: `hello` (`Hello`, on every connection), `update` (`Update`),
 * `css` (`CssSwap`), `reload` (`Reload`), `build-error` (`BuildError`) and `built`. Every change
 * of the code has a version (a stylesheet of `static/` changes no page; one the app imports is
 * rebuilt under a new name, which the page's next load must link); a page knows the version of the
 * code that made it, and reloads when a `hello` says it missed one.
 */

export const EVENTS_PATH = "/_dev/events";
/** The dev client; its query carries the session, the page's version and its `styles`. */
export const CLIENT_PATH = "/_app/dev/client.js";
/** `POST` a browser stack, get it back at its sources. */
export const STACK_PATH = "/_dev/stack";

export interface Hello {
  session: string;
  version: number;
  /**
   * How many swaps of `static/` stylesheets this session made: a page made before the last of
   * them, whose stream opened after it, fetches its stylesheets afresh.
   */
  styles: number;
  /** The browser build's error, while it fails. */
  error?: string;
}

export interface Update {
  version: number;
  /** Each island whose chunk was rebuilt, by name. */
  islands: Record<string, IslandUpdate>;
}

export interface IslandUpdate {
  /** The rebuilt chunk's URL. */
  url: string;
  /** The changed sources it evaluates anew: each must refresh in place. */
  files: string[];
}

export interface CssSwap {
  /** Paths of the changed stylesheets of `static/` (`/styles.css`): fetched afresh. */
  hrefs: string[];
  /** Each earlier URL of a rebuilt stylesheet the app imports -> its new one. */
  moved: Record<string, string>;
  /** The version of the code the swap brings the page to, when it is a new one. */
  version?: number;
  /** `Hello.styles` after this swap. */
  styles: number;
}

export interface Reload {
  version: number;
  why: string;
}

export interface BuildError {
  text: string;
}
