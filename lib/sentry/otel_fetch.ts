/**
 * @module
 * Sentry's headers on outgoing `fetch` when Deno's OpenTelemetry traces it. Deno's own
 * instrumentation runs inside the original `fetch`, after this wrapper: it makes the client span
 * and *appends* `traceparent`, and `baggage` from the OTel context. So this wrapper never sets
 * either header itself (that would make two); it adds `sentry-trace` and hands the trace's DSC to
 * Deno as OTel baggage, which Deno then writes as the one `baggage` header. Hosts that are not
 * propagation targets get no Sentry header and none of the `sentry-*` baggage entries. Sentry's
 * own hosts (the ingest, Spotlight) get no span and no header at all.
 */
import {
  type BaggageEntry,
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  trace,
} from "@opentelemetry/api";
import { LRUMap, shouldPropagateTraceForUrl } from "./sdk.ts";
import { activeBaggageHeader } from "../otel/request_span.ts";
import { type DscSource, isValidSpan, sentryTraceOf, traceDsc } from "./dsc.ts";

export interface PropagationOptions {
  source: DscSource;
  /** `SENTRY_TRACE_PROPAGATION_TARGETS`; unset: every host. */
  targets?: string[];
  /** `host[:port]` of Sentry's ingest and of Spotlight. */
  privateHosts: string[];
}

/**
 * A context under which Deno's fetch makes no span and injects no header (OpenTelemetry's "suppress
 * tracing" key, which Deno's propagators honour). No span: a parent-based sampler follows its
 * unsampled flag, and a ratio below 1 never keeps its trace id, whose low 64 bits (what the ratio
 * decides by) are the highest there are.
 */
const QUIET = trace.setSpanContext(ROOT_CONTEXT, {
  traceId: "0000000000000001ffffffffffffffff",
  spanId: "0000000000000001",
  traceFlags: 0,
  isRemote: true,
}).setValue(createContextKey("OpenTelemetry SDK Context Key SUPPRESS_TRACING"), true);

/** Wraps `globalThis.fetch`, once per process. */
export function propagateOnFetch(options: PropagationOptions): void {
  const original = globalThis.fetch;
  const privateHosts = new Set(options.privateHosts);
  const decisions = new LRUMap<string, boolean>(100);

  globalThis.fetch = function fetch(input: RequestInfo | URL, init?: RequestInit) {
    const url = input instanceof Request ? input.url : String(input);
    const host = URL.parse(url)?.host;
    if (host && privateHosts.has(host)) return context.with(QUIET, () => original(input, init));
    const ids = trace.getActiveSpan()?.spanContext();
    if (!isValidSpan(ids)) return original(input, init);
    const active = context.active();
    let bag = propagation.getBaggage(active) ?? propagation.createBaggage();
    for (const [key] of bag.getAllEntries()) {
      if (key.startsWith("sentry-")) bag = bag.removeEntry(key);
    }
    let headers: Headers | undefined;
    if (shouldPropagateTraceForUrl(url, options.targets, decisions)) {
      headers = new Headers(
        init?.headers ?? (input instanceof Request ? input.headers : undefined),
      );
      if (!headers.has("sentry-trace")) headers.set("sentry-trace", sentryTraceOf(ids));
      const dsc = traceDsc(ids, activeBaggageHeader(), options.source);
      for (const [key, value] of Object.entries(dsc)) {
        bag = bag.setEntry(`sentry-${key}`, { value } as BaggageEntry);
      }
    }
    const withBaggage = bag.getAllEntries().length
      ? propagation.setBaggage(active, bag)
      : propagation.deleteBaggage(active);
    return context.with(
      withBaggage,
      () => original(input, headers ? { ...init, headers } : init),
    );
  };
}
