/**
 * @module
 * Sentry's headers on outgoing `fetch` when Deno's OpenTelemetry traces it. Deno's own
 * instrumentation runs inside the original `fetch`, after this wrapper: it makes the client span
 * and *appends* `traceparent`, and `baggage` from the OTel context when its baggage propagator is
 * on. So this wrapper never sets `traceparent` (that would make two); it adds `sentry-trace`, and
 * the trace's DSC beside the caller's other entries goes out as the one `baggage` header: handed
 * to Deno as OTel baggage, or written here: under the launcher, which leaves Deno's baggage
 * propagator out (`otel/env.ts`), and for a call that sets a `baggage` of its own. Hosts that are
 * not propagation targets get no Sentry header, none of the `sentry-*` baggage entries and none of
 * the caller's (the app's own baggage, and a call's own header, still go). With Deno's baggage
 * propagator on (`deno serve` with `OTEL_DENO` and no `OTEL_PROPAGATORS=tracecontext`), Deno
 * extracts the caller's entries into the context, where they cannot be told from the app's: they
 * go on as Deno sends them. Sentry's own hosts (the ingest, Spotlight) get no span and no header.
 */
import {
  type BaggageEntry,
  baggageEntryMetadataFromString,
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  trace,
} from "@opentelemetry/api";
import { LRUMap, shouldPropagateTraceForUrl } from "./sdk.ts";
import { activeBaggageHeader, INCOMING_BAGGAGE } from "../otel/request_span.ts";
import { type DscSource, isValidSpan, MAX_BAGGAGE, sentryTraceOf, traceDsc } from "./dsc.ts";

export interface PropagationOptions {
  source: DscSource;
  /** `SENTRY_TRACE_PROPAGATION_TARGETS` (`config.ts`); unset: every host. */
  targets?: (string | RegExp)[];
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
  // Whether Deno writes `baggage` from the OTel context: not without its baggage propagator.
  const denoWritesBaggage = propagation.fields().includes("baggage");

  globalThis.fetch = function fetch(input: RequestInfo | URL, init?: RequestInit) {
    const url = input instanceof Request ? input.url : String(input);
    const host = URL.parse(url)?.host;
    if (host && privateHosts.has(host)) return context.with(QUIET, () => original(input, init));
    const ids = trace.getActiveSpan()?.spanContext();
    if (!isValidSpan(ids)) return original(input, init);
    const active = context.active();
    // A Map, made a Baggage once: OpenTelemetry's setEntry copies the whole baggage, and one per
    // member of a caller's 8 KB header took a quadratic 140 ms of CPU for every call.
    const bag = new Map(propagation.getBaggage(active)?.getAllEntries());
    const target = shouldPropagateTraceForUrl(url, options.targets, decisions);
    // A caller's entries go where its trace goes, as the DSC does: a third-party API is sent none
    // of what a caller put in its header (a tenant, a user id, whatever it was).
    if (!denoWritesBaggage && target) addCallers(bag, active.getValue(INCOMING_BAGGAGE));
    for (const key of bag.keys()) if (key.startsWith("sentry-")) bag.delete(key);
    let headers: Headers | undefined;
    const ownHeaders = () =>
      headers ??= new Headers(
        init?.headers ?? (input instanceof Request ? input.headers : undefined),
      );
    if (target) {
      headers = ownHeaders();
      if (!headers.has("sentry-trace")) headers.set("sentry-trace", sentryTraceOf(ids));
      const dsc = traceDsc(ids, activeBaggageHeader(), options.source);
      for (const [key, value] of Object.entries(dsc)) bag.set(`sentry-${key}`, { value });
    }
    const entries = dscFirst([...bag]);
    // A call that sets its own `baggage` gets the one header written here, Deno's propagator given
    // none: it would append a second, the caller's value of a key after the call's (the one a
    // receiver keeps).
    const ownBaggage = (init?.headers !== undefined || input instanceof Request) &&
      ownHeaders().has("baggage");
    if (!denoWritesBaggage || ownBaggage) {
      if (entries.length) appendBaggage(ownHeaders(), entries);
      const call = () => original(input, headers ? { ...init, headers } : init);
      return denoWritesBaggage ? context.with(propagation.deleteBaggage(active), call) : call();
    }
    // Only what W3C's limits let through, the DSC first: a Baggage is made from an object, whose
    // numeric keys ("0", "1", ...) go ahead of the others, and Deno writes the first 180.
    const kept = withinLimits(entries);
    const withBaggage = kept.length
      ? propagation.setBaggage(active, propagation.createBaggage(Object.fromEntries(kept)))
      : propagation.deleteBaggage(active);
    return context.with(
      withBaggage,
      () => original(input, headers ? { ...init, headers } : init),
    );
  };
}

/**
 * Adds to `bag` the entries of the caller's `baggage` header (kept as sent by `requestSpan`), as
 * Deno's propagator (OpenTelemetry's) would have extracted them: properties kept, the last member
 * of a key taken; a member whose key or value does not decode is left out, and so is a header past
 * W3C's limit (`MAX_BAGGAGE`). An entry the app set itself stays as it is.
 */
function addCallers(bag: Map<string, BaggageEntry>, header: unknown): void {
  if (typeof header !== "string" || header.length > MAX_BAGGAGE) return;
  const set = new Set(bag.keys());
  for (const member of header.split(",")) {
    const [pair, ...properties] = member.split(";");
    const eq = pair.indexOf("=");
    if (eq < 1) continue;
    try {
      const key = decodeURIComponent(pair.slice(0, eq).trim());
      const value = decodeURIComponent(pair.slice(eq + 1).trim());
      if (!key || set.has(key)) continue;
      bag.set(
        key,
        properties.length
          ? { value, metadata: baggageEntryMetadataFromString(properties.join(";")) }
          : { value },
      );
    } catch {
      // not percent-encoded as W3C Baggage has it: no entry
    }
  }
}

/**
 * The trace's DSC ahead of the other entries: past W3C's limits a writer (Deno's propagator, or
 * `appendBaggage`) leaves out the last members, and a receiver needs the DSC to stay on the trace.
 */
function dscFirst(entries: [string, BaggageEntry][]): [string, BaggageEntry][] {
  const dsc = entries.filter(([key]) => key.startsWith("sentry-"));
  return dsc.length === 0 || dsc.length === entries.length
    ? entries
    : [...dsc, ...entries.filter(([key]) => !key.startsWith("sentry-"))];
}

/** W3C Baggage's other limits, as Deno's propagator (OpenTelemetry's) keeps them. */
const MAX_MEMBERS = 180;
const MAX_MEMBER = 4_096;

/**
 * The entries as W3C Baggage writes them, after any `baggage` the call had already, whose value
 * of a key is the one that goes (a receiver takes the last of two).
 */
function appendBaggage(headers: Headers, entries: [string, BaggageEntry][]): void {
  const own = headers.get("baggage");
  const members = own ? own.split(",") : [];
  withinLimits(entries, members, own?.length ?? 0);
  if (members.length) headers.set("baggage", members.join(","));
}

/**
 * The entries, in order, that fit after `members` (`length` characters; each written is added to
 * them) within W3C's limits, as Deno's propagator writes them: one that would go past is left out
 * (the DSC comes first: a receiver takes no DSC from a longer header, `dscFromBaggage`), and so is
 * a key `members` has.
 */
function withinLimits(
  entries: [string, BaggageEntry][],
  members: string[] = [],
  length = 0,
): [string, BaggageEntry][] {
  const taken = new Set(members.map(keyOf));
  const kept: [string, BaggageEntry][] = [];
  for (const entry of entries) {
    if (members.length >= MAX_MEMBERS) break;
    const [key, { value, metadata }] = entry;
    const member = `${encodeURIComponent(key)}=${encodeURIComponent(value)}` +
      (metadata ? `;${metadata.toString()}` : "");
    const added = member.length + (members.length ? 1 : 0);
    if (taken.has(key) || member.length > MAX_MEMBER || length + added > MAX_BAGGAGE) continue;
    members.push(member);
    kept.push(entry);
    length += added;
  }
  return kept;
}

/** A baggage member's key, decoded where it can be. */
function keyOf(member: string): string {
  const key = member.split("=", 1)[0].trim();
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}
