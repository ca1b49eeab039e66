/**
 * @module
 * What a page with islands carries for the browser SDK: the request's trace (`sentry-trace`,
 * `baggage` meta tags, continued by the pageload transaction) and the SDK chunk with its settings,
 * which the island runtime reads (`client/sentry_loader.ts`); as HTML, written right before the
 * runtime's script (`render/islands_head.ts`). No script: the island runtime loads the SDK after
 * the page has hydrated. The trace comes from whatever traces the request: Sentry's span, or Deno's
 * OpenTelemetry span.
 */
import { escapeHtml } from "../errors/screen.ts";
import type { Assets } from "../server/manifest.ts";
import type { SentryConfig } from "./config.ts";
import {
  encodeSettings,
  SENTRY_META,
  type SentryPageSettings,
} from "../shared/sentry_page_settings.ts";

/** The request's trace, as the page's meta tags carry it. */
export interface PageTrace {
  sentryTrace: string;
  baggage?: string;
}

/** Builds, once, what each page gets: its trace, and the SDK's settings (with a build's SDK). */
export function sentryHead(
  config: SentryConfig,
): (trace: PageTrace | undefined, assets: Assets) => string {
  const browser: SentryPageSettings["config"] = {
    dsn: config.dsn,
    environment: config.environment,
    release: config.release,
    tracesSampleRate: config.tracesSampleRate,
    tunnel: config.tunnel,
    spotlight: config.spotlight,
    scrubFields: config.scrubFields,
  };
  // Every page names the same SDK chunk (the build's): its tag is made once.
  let settings: { sdk: string; tag: string } | undefined;
  const settingsFor = (sdk: string | undefined) => {
    if (!sdk) return "";
    if (settings?.sdk !== sdk) {
      const content = encodeSettings({ sdk, config: browser });
      settings = { sdk, tag: `<meta name="${SENTRY_META}" content="${content}"/>` };
    }
    return settings.tag;
  };
  return (trace, assets) =>
    (trace ? meta("sentry-trace", trace.sentryTrace) : "") +
    (trace?.baggage ? meta("baggage", trace.baggage) : "") +
    settingsFor(assets.sentry?.entry);
}

const meta = (name: string, content: string) =>
  `<meta name="${name}" content="${escapeHtml(content)}"/>`;
