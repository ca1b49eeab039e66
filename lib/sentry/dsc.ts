/**
 * @module
 * Sentry's trace headers for an OpenTelemetry span: `sentry-trace` and the dynamic sampling
 * context (DSC) that `baggage` carries as `sentry-*` entries. Plain string work on a span's ids -
 * no SDK - for the page's meta tags, outgoing fetches and the envelopes of error events alike.
 */

/** What an OTel span context is, as far as this needs it (`span.spanContext()`). */
export interface SpanIds {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

/** Sentry's DSC, as its `sentry-*` baggage entries carry it. */
export type Dsc = Record<string, string>;

/** What a new DSC says about this service: from the DSN and the settings, once. */
export interface DscSource {
  publicKey: string;
  environment: string;
  release?: string;
  /** The ratio of new traces Deno samples, for `sample_rate` and `sample_rand`. */
  sampleRate?: number;
}

export const isSampled = (ids: SpanIds) => (ids.traceFlags & 1) === 1;
const INVALID_TRACE = "0".repeat(32);

/** A span that is part of a trace: OpenTelemetry's no-op spans carry an all-zero trace id. */
export const isValidSpan = (ids: SpanIds | undefined): ids is SpanIds =>
  ids?.traceId.length === 32 && ids.spanId.length === 16 && ids.traceId !== INVALID_TRACE;

/** `{traceId}-{spanId}-{1|0}`: the `sentry-trace` header and `<meta name="sentry-trace">`. */
export function sentryTraceOf(ids: SpanIds): string {
  return `${ids.traceId}-${ids.spanId}-${isSampled(ids) ? 1 : 0}`;
}

/**
 * The random number Sentry samples a trace by, taken from the trace id as Deno's `traceidratio`
 * sampler does (its low 64 bits as a fraction of 2^64): a Sentry SDK further on (the browser)
 * sampling by `sample_rand < rate` then agrees with Deno. When a caller decided otherwise (its
 * `traceparent` flag), the number is moved to agree with that decision, as Sentry's SDKs do.
 */
export function sampleRandOf(traceId: string, sampled: boolean, rate?: number): string {
  // The low 64 bits' first 52: as many as a double holds exactly, and far more than 6 digits need.
  let rand = parseInt(traceId.slice(16, 29), 16) / 2 ** 52;
  if (rate !== undefined && sampled !== rand < rate) {
    rand = sampled ? rand * rate : rate + rand * (1 - rate);
  }
  // Cut, not rounded: a number just below the rate must stay below it.
  return (Math.floor(rand * 1e6) / 1e6).toFixed(6);
}

/** A new DSC, for a trace that began here or came in without one. */
export function newDsc(ids: SpanIds, source: DscSource): Dsc {
  const dsc: Dsc = {
    trace_id: ids.traceId,
    public_key: source.publicKey,
    environment: source.environment,
    sampled: String(isSampled(ids)),
    sample_rand: sampleRandOf(ids.traceId, isSampled(ids), source.sampleRate),
  };
  if (source.release) dsc.release = source.release;
  if (source.sampleRate !== undefined) dsc.sample_rate = String(source.sampleRate);
  return dsc;
}

/**
 * The longest `baggage` header taken from a caller, in characters: W3C Baggage's limit, past which
 * Deno's own propagator drops entries. A caller's longer one is no DSC of ours: a client's entries
 * of any size went into its pages' meta tag and the envelope of every error event of its requests.
 */
export const MAX_BAGGAGE = 8_192;

/**
 * The `sentry-*` entries of a `baggage` header, as a DSC; undefined when there are none, or the
 * header is longer than `MAX_BAGGAGE`.
 */
export function dscFromBaggage(baggage: string | null | undefined): Dsc | undefined {
  if (!baggage?.includes("sentry-") || baggage.length > MAX_BAGGAGE) return undefined;
  const dsc: Dsc = {};
  for (const member of baggage.split(",")) {
    const eq = member.indexOf("=");
    const key = member.slice(0, eq).trim();
    if (eq < 0 || !key.startsWith("sentry-")) continue;
    const value = member.slice(eq + 1).split(";")[0].trim();
    try {
      dsc[key.slice(7)] = decodeURIComponent(value);
    } catch {
      // a malformed entry is no part of a DSC
    }
  }
  return Object.keys(dsc).length ? dsc : undefined;
}

/**
 * The trace's DSC: the caller's, unchanged, when it brought one for this trace (as Sentry's SDKs
 * keep it); a new one otherwise. A caller's DSC of another trace is not ours to pass on.
 */
export function traceDsc(
  ids: SpanIds,
  incomingBaggage: string | null | undefined,
  source: DscSource,
): Dsc {
  const incoming = dscFromBaggage(incomingBaggage);
  return incoming?.trace_id === ids.traceId ? incoming : newDsc(ids, source);
}

/** `sentry-trace_id=...,sentry-public_key=...`: `baggage`, and `<meta name="baggage">`. */
export function dscToBaggage(dsc: Dsc): string {
  return Object.entries(dsc)
    .filter(([, value]) => value !== "")
    .map(([key, value]) => `sentry-${key}=${encodeURIComponent(value)}`)
    .join(",");
}

/**
 * `dscToBaggage(traceDsc(...))`, for every page: a trace that came without a DSC (most do) gets the
 * entries of this service encoded once, after its own. Not sampled, it has no `sample_rand`: the
 * flag already decides for every SDK downstream (the browser's pageload follows `sampled=false`),
 * and no sampling is left for the number to make.
 */
export function traceBaggage(
  ids: SpanIds,
  incomingBaggage: string | null | undefined,
  source: DscSource,
): string {
  if (incomingBaggage?.includes("sentry-")) {
    return dscToBaggage(traceDsc(ids, incomingBaggage, source));
  }
  if (!isSampled(ids)) {
    return `sentry-trace_id=${ids.traceId},sentry-sampled=false,${serviceEntries(source)}`;
  }
  return `sentry-trace_id=${ids.traceId},sentry-sampled=true,sentry-sample_rand=${
    sampleRandOf(ids.traceId, true, source.sampleRate)
  },${serviceEntries(source)}`;
}

const SERVICE_ENTRIES = new WeakMap<DscSource, string>();

function serviceEntries(source: DscSource): string {
  let entries = SERVICE_ENTRIES.get(source);
  if (entries === undefined) {
    const { trace_id: _, sampled: __, sample_rand: ___, ...service } = newDsc(
      { traceId: INVALID_TRACE, spanId: "", traceFlags: 0 },
      source,
    );
    entries = dscToBaggage(service);
    SERVICE_ENTRIES.set(source, entries);
  }
  return entries;
}
