/**
 * @module
 * The browser SDK (`@sentry/react`). Nothing imports it statically: the island runtime
 * (`sentry_loader.ts`, on pages that carry the SDK's settings) imports this chunk after the page
 * has loaded and calls `start`. The pageload transaction continues the server's trace from the
 * `sentry-trace`/`baggage` meta tags; fetches to our own origin carry the trace on; every error the
 * runtime reported before the SDK was there (`report.ts`'s queue) is sent now, and every later one
 * as it happens. An uncaught error that both our runtime and the SDK's global handlers see is sent
 * once (`dedupe`).
 */
import {
  browserTracingIntegration,
  captureException,
  init,
  spotlightBrowserIntegration,
} from "@sentry/react";
import { type ErrorReport, setReporter } from "../client/report.ts";
import { sdkTakesOverFetch } from "../client/trace.ts";
import { scrubIntegration } from "./scrub.ts";

/** The settings the server renders into the page. */
export interface BrowserSentryConfig {
  dsn?: string;
  environment: string;
  release?: string;
  tracesSampleRate: number;
  tunnel?: string;
  spotlight?: string;
  scrubFields: string[];
}

export function start(config: BrowserSentryConfig): void {
  init({
    dsn: config.dsn,
    environment: config.environment,
    release: config.release,
    tracesSampleRate: config.tracesSampleRate,
    tunnel: config.tunnel,
    // Same-origin requests (API routes, server actions) by default; W3C headers as on the server.
    propagateTraceparent: true,
    integrations: [
      browserTracingIntegration(),
      scrubIntegration(config.scrubFields),
      ...config.spotlight ? [spotlightBrowserIntegration({ sidecarUrl: config.spotlight })] : [],
    ],
  });
  sdkTakesOverFetch();
  setReporter(report);
}

/** Kinds of report where something (an error boundary, React itself) dealt with the error. */
const HANDLED = new Set(["caught", "recoverable"]);

function report({ error, kind, fatal, contained = false, island }: ErrorReport): void {
  captureException(error, {
    // A `<Contained>` part that gave way to its fallback handled it.
    mechanism: { handled: contained || HANDLED.has(kind), type: `auto.browser.${kind}` },
    captureContext: {
      level: fatal ? "fatal" : "error",
      tags: { kind, ...contained && { contained }, ...island && { island } },
    },
  });
}
