/**
 * @module
 * What a page with islands carries for the browser SDK: the request's trace (`sentry-trace`,
 * `baggage` meta tags, continued by the pageload transaction) and the SDK chunk with its settings,
 * which the island runtime reads (`client/sentry_loader.ts`); as the bytes of HTML written right
 * before the runtime's script (`render/islands_head.ts`). No script: the island runtime loads the
 * SDK after the page has hydrated. The trace comes from whatever traces the request: Sentry's span,
 * or Deno's OpenTelemetry span.
 */
import { escapeHtml } from "../errors/screen.ts";
import type { Assets } from "../server/manifest.ts";
import type { SentryConfig } from "./config.ts";
import { type DscSource, sentryTraceOf, type SpanIds, traceBaggage } from "./dsc.ts";
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

const encoder = new TextEncoder();

/** Builds, once, what each page gets: its trace, and the SDK's settings (with a build's SDK). */
export function sentryHead(
  config: SentryConfig,
): (trace: PageTrace | undefined, assets: Assets) => Uint8Array {
  const html = headHtml(config);
  return (trace, assets) => encoder.encode(html(trace, assets));
}

/**
 * The tags of a trace begun here and not sampled (no caller's DSC; nine pages in ten at
 * production's 0.1): a copy of bytes made once per build's SDK chunk, the ids written in. Made
 * from strings on every page, they were some 1 KB of garbage a page (docs/performance.md, perf38).
 * The ids' places are held by characters nothing else in the tags holds: the settings and the
 * DSC's entries are percent-encoded, which turns `{` and `|` into `%7B` and `%7C`.
 */
export function unsampledHead(
  config: SentryConfig,
  source: DscSource,
): (ids: SpanIds, assets: Assets) => Uint8Array {
  const html = headHtml(config);
  const holes: SpanIds = { traceId: "{".repeat(32), spanId: "|".repeat(16), traceFlags: 0 };
  const trace = {
    sentryTrace: sentryTraceOf(holes),
    baggage: traceBaggage(holes, undefined, source),
  };
  let template:
    | { sdk?: string; bytes: Uint8Array; traceAt: number[]; spanAt: number[] }
    | undefined;
  const templateFor = (assets: Assets) => {
    const sdk = assets.sentry?.entry;
    if (!template || template.sdk !== sdk) {
      const bytes = encoder.encode(html(trace, assets));
      template = {
        sdk,
        bytes,
        traceAt: runs(bytes, holes.traceId),
        spanAt: runs(bytes, holes.spanId),
      };
    }
    return template;
  };
  return (ids, assets) => {
    const { bytes, traceAt, spanAt } = templateFor(assets);
    const page = bytes.slice();
    for (const at of traceAt) writeAscii(page, at, ids.traceId);
    for (const at of spanAt) writeAscii(page, at, ids.spanId);
    return page;
  };
}

function headHtml(config: SentryConfig): (trace: PageTrace | undefined, assets: Assets) => string {
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

/** Where each run of `hole` (one ASCII character, repeated) begins in `bytes`. */
function runs(bytes: Uint8Array, hole: string): number[] {
  const at: number[] = [];
  const fill = hole.charCodeAt(0);
  for (let i = bytes.indexOf(fill); i !== -1; i = bytes.indexOf(fill, i + hole.length)) at.push(i);
  return at;
}

function writeAscii(bytes: Uint8Array, at: number, text: string): void {
  for (let i = 0; i < text.length; i++) bytes[at + i] = text.charCodeAt(i);
}
