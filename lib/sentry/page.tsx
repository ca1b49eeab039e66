/**
 * @module
 * What a page carries for the browser SDK: the request's trace (`sentry-trace`, `baggage` meta
 * tags, continued by the pageload transaction) and a one-line loader that imports the SDK chunk
 * once the page has loaded and the browser is idle — after the islands have hydrated, never on the
 * critical path — and starts it with the settings it carries (not a meta tag: the client-side
 * failure screen replaces the document, and an error before the SDK loaded must still be sent).
 */
import { type Span, spanToBaggageHeader, spanToTraceHeader } from "@sentry/core";
import { type ReactNode, use } from "react";
import { RenderContext } from "../render_context.ts";
import type { BrowserSentryConfig } from "../client/sentry.ts";
import type { SentryConfig } from "./config.ts";

/** Builds, once, what each page gets: its trace, and the loader with the settings. */
export function sentryHead(config: SentryConfig): (span: Span | undefined) => ReactNode {
  const browser: BrowserSentryConfig = {
    dsn: config.dsn,
    environment: config.environment,
    release: config.release,
    tracesSampleRate: config.tracesSampleRate,
    tunnel: config.tunnel,
    spotlight: config.spotlight,
  };
  const settings = asScript(browser);
  return (span) => {
    // From the span itself, not `getTraceData()`: that gives nothing without a DSN (Spotlight only).
    const baggage = span && spanToBaggageHeader(span);
    return (
      <>
        {span && <meta name="sentry-trace" content={spanToTraceHeader(span)} />}
        {baggage && <meta name="baggage" content={baggage} />}
        <SdkLoader settings={settings} />
      </>
    );
  };
}

function SdkLoader({ settings }: { settings: string }) {
  const render = use(RenderContext);
  const entry = render?.assets.sentry?.entry;
  if (!entry) return null;
  const load = `addEventListener("load",()=>(self.requestIdleCallback??setTimeout)(()=>` +
    `import(${asScript(entry)}).then((m)=>m.start(${settings}))))`;
  return <script type="module" nonce={render.nonce} dangerouslySetInnerHTML={{ __html: load }} />;
}

/** A value as a JavaScript literal that cannot close the script element it sits in. */
function asScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}
