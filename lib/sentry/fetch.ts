/**
 * @module
 * Outgoing `fetch` on the server: an `http.client` span and `sentry-trace`, `baggage` and
 * `traceparent` headers for the current trace, which `@sentry/deno` does not add by itself. Built
 * on `@sentry/core`'s fetch instrumentation (the one the browser and edge SDKs use). Hosts in
 * `privateHosts` (Sentry's ingest, Spotlight) never get a span or a header.
 */
import type { Span } from "@sentry/core";
import { defineIntegration, LRUMap, shouldPropagateTraceForUrl } from "./sdk.ts";
import {
  addFetchInstrumentationHandler,
  getClient,
  instrumentFetchRequest,
} from "./sdk_tracing.ts";

export const outgoingFetchIntegration = defineIntegration((privateHosts: string[]) => {
  const isPrivate = (url: string) => {
    try {
      return privateHosts.includes(new URL(url).host);
    } catch {
      return false; // not an absolute URL: nothing a server can fetch anyway
    }
  };
  return {
    name: "OutgoingFetch",
    setup(client) {
      const targets = client.getOptions().tracePropagationTargets;
      const decisions = new LRUMap<string, boolean>(100);
      const spans: Record<string, Span> = {};
      const shouldCreateSpan = (url: string) => !isPrivate(url);
      const shouldAttachHeaders = (url: string) =>
        !isPrivate(url) && shouldPropagateTraceForUrl(url, targets, decisions);
      addFetchInstrumentationHandler((data) => {
        if (getClient() !== client) return;
        instrumentFetchRequest(data, shouldCreateSpan, shouldAttachHeaders, spans, {
          spanOrigin: "auto.http.fetch",
          propagateTraceparent: true,
        });
      });
    },
  };
});
