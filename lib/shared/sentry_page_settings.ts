/**
 * @module
 * The `<meta>` by which a page with islands tells the island runtime to start the Sentry browser
 * SDK: the SDK chunk's URL and its settings. Its own module, free of the SDK, for the server's
 * `page.ts` and the browser's `client/sentry_loader.ts` alike.
 *
 * The settings travel as percent-encoded JSON: text with none of `"&'<>`, which React writes into
 * the attribute as it is. Plain JSON is full of quotes, and React escapes an attribute's value on
 * every render: for these few hundred bytes, some 4 KB of garbage on every page served (measured,
 * docs/performance.md).
 */
import type { BrowserSentryConfig } from "../sentry/browser.ts";

export const SENTRY_META = "app-sentry";

export interface SentryPageSettings {
  /** The URL of the SDK chunk (`sentry/browser.ts`). */
  sdk: string;
  config: BrowserSentryConfig;
}

/** The meta tag's `content`: nothing in it for HTML to escape (`encodeURIComponent` keeps `'`). */
export function encodeSettings(settings: SentryPageSettings): string {
  return encodeURIComponent(JSON.stringify(settings)).replaceAll("'", "%27");
}

export function decodeSettings(content: string): SentryPageSettings {
  return JSON.parse(decodeURIComponent(content));
}
