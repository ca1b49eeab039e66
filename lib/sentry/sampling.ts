/**
 * @module
 * Who decides whether a request is traced, when the Sentry SDK traces requests itself (without
 * Deno's OpenTelemetry). A caller's `sentry-trace: ...-1` (or `traceparent: ...-01`) says its trace
 * is sampled, and the SDK would follow it: any client could put every request of its own into
 * Sentry, past `SENTRY_TRACES_SAMPLE_RATE` and the project's quota. So a caller's "sampled" is
 * followed for at most `parentLimit` requests a second in this process - enough for the calls our
 * own pages make on the trace the server sampled - and past that such a request is sampled at the
 * rate like any other. A caller's "not sampled" is always followed: it can only lower the rate.
 * The sampling values a caller sends in `baggage` (`sentry-sample_rand`, `sentry-sample_rate`) are
 * dropped before the trace is continued (`untrustedBaggage`): the SDK compares the rate with them,
 * so `sentry-sample_rand=0` would otherwise sample every request as surely as the flag.
 */
import type { TracesSamplerSamplingContext } from "@sentry/core";
import { MAX_BAGGAGE } from "./dsc.ts";

export type TracesSampler = (context: TracesSamplerSamplingContext) => number;

/** The SDK's `tracesSampler`: `rate` for new traces, a caller's decision within `parentLimit`. */
export function tracesSampler(rate: number, parentLimit: number): TracesSampler {
  const allowed = perSecond(parentLimit);
  return ({ parentSampled }) => {
    if (parentSampled === false) return 0;
    if (parentSampled === true && allowed()) return 1;
    return rate;
  };
}

/**
 * A token bucket: true at most `limit` times in any second on average, with bursts of `limit`.
 * Per process (each `deno serve --parallel` worker, each Deploy isolate has its own).
 */
function perSecond(limit: number): () => boolean {
  let tokens = limit;
  let last = performance.now();
  return () => {
    const now = performance.now();
    tokens = Math.min(limit, tokens + (now - last) * limit / 1000);
    last = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

const SAMPLING_ENTRY = /^\s*sentry-sample_ra(?:nd|te)\s*=/;

/**
 * A caller's `baggage` without its sampling values; the rest of the trace's context is kept. None
 * past `MAX_BAGGAGE` (W3C's limit): the SDK would carry all of it in its envelopes.
 */
export function untrustedBaggage(baggage: string | null): string | null {
  if (baggage && baggage.length > MAX_BAGGAGE) return null;
  if (!baggage?.includes("sentry-sample_ra")) return baggage;
  return baggage.split(",").filter((entry) => !SAMPLING_ENTRY.test(entry)).join(",");
}
