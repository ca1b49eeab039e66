/**
 * @module
 * The `<meta>` by which a page with islands tells the island runtime to start the Sentry browser
 * SDK: the SDK chunk's URL and its settings. Its own module, free of the SDK, for the server's
 * `page.tsx` and the browser's `client/sentry_loader.ts` alike.
 */
import type { BrowserSentryConfig } from "./browser.ts";

export const SENTRY_META = "app-sentry";

export interface SentryPageSettings {
  /** The URL of the SDK chunk (`client/sentry.ts`). */
  sdk: string;
  config: BrowserSentryConfig;
}
