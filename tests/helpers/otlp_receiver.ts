/**
 * @module
 * An OTLP/HTTP receiver on 127.0.0.1, for Deno's exporter set to JSON
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`): records every request's path and headers, and reads
 * the spans and log records of trace and log exports into plain objects tests can wait for.
 */
import { Arrivals } from "../../lib/testing/arrivals.ts";

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  startMs: number;
  endMs: number;
  /** The instrumentation scope: `deno` for Deno's own spans, `app` for the app's. */
  scope: string;
  resource: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}

export interface OtlpLog {
  traceId?: string;
  spanId?: string;
  body: unknown;
  severityText?: string;
}

export interface OtlpRequest {
  path: string;
  headers: Headers;
  contentType: string;
}

export interface OtlpReceiver extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  requests: OtlpRequest[];
  spans: OtlpSpan[];
  logs: OtlpLog[];
  /** Resolves with the first span (received or to come) that matches, within `ms`. */
  span(predicate: (span: OtlpSpan) => boolean, ms?: number): Promise<OtlpSpan>;
  log(predicate: (log: OtlpLog) => boolean, ms?: number): Promise<OtlpLog>;
}

/** Settings for a server exporting here as JSON, often (every 100 ms). */
export function otlpEnv(receiver: { url: string }): Record<string, string> {
  return {
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: "100",
    OTEL_BLRP_SCHEDULE_DELAY: "100",
    OTEL_DENO_METRICS: "false",
  };
}

/**
 * `otlpEnv`, with every request traced and Sentry on for errors (at `sentryDsn`). Parent-based, as
 * the launcher sets it: an unsampled parent then keeps Sentry's own posts out of traces.
 */
export function tracedEnv(receiver: { url: string }, sentryDsn: string): Record<string, string> {
  return {
    ...otlpEnv(receiver),
    OTEL_TRACES_SAMPLER: "parentbased_always_on",
    SENTRY_DSN: sentryDsn,
    SENTRY_TRACES_SAMPLE_RATE: "1",
  };
}

export function startOtlpReceiver(): OtlpReceiver {
  const requests: OtlpRequest[] = [];
  const spans: OtlpSpan[] = [];
  const logs: OtlpLog[] = [];
  const arrivals = new Arrivals();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const contentType = req.headers.get("content-type") ?? "";
    requests.push({ path: new URL(req.url).pathname, headers: req.headers, contentType });
    const bytes = await decompressed(req);
    if (contentType.includes("json")) read(JSON.parse(new TextDecoder().decode(bytes)));
    arrivals.arrived();
    return Response.json({});
  });

  // deno-lint-ignore no-explicit-any -- OTLP JSON, as the exporter wrote it
  const read = (body: any) => {
    for (const { resource, scopeSpans } of body.resourceSpans ?? []) {
      for (const { scope, spans: list } of scopeSpans ?? []) {
        for (const s of list ?? []) {
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId || undefined,
            name: s.name,
            kind: s.kind,
            attributes: attributes(s.attributes),
            status: s.status ?? {},
            startMs: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
            endMs: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
            scope: scope?.name,
            resource: attributes(resource?.attributes),
            // deno-lint-ignore no-explicit-any
            links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId })),
          });
        }
      }
    }
    for (const { scopeLogs } of body.resourceLogs ?? []) {
      for (const { logRecords } of scopeLogs ?? []) {
        for (const l of logRecords ?? []) {
          logs.push({
            traceId: l.traceId || undefined,
            spanId: l.spanId || undefined,
            body: value(l.body),
            severityText: l.severityText,
          });
        }
      }
    }
  };

  const waitFor = <T>(list: T[], predicate: (item: T) => boolean, ms: number, what: string) =>
    arrivals.until(() => list.find(predicate), ms, () => {
      const seen = spans.map((s) => `${s.name} (${s.traceId.slice(0, 8)})`).join(", ");
      return `no matching ${what} within ${ms} ms; spans: ${seen}`;
    });

  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    port: server.addr.port,
    requests,
    spans,
    logs,
    span: (predicate, ms = 10_000) => waitFor(spans, predicate, ms, "span"),
    log: (predicate, ms = 10_000) => waitFor(logs, predicate, ms, "log record"),
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

// deno-lint-ignore no-explicit-any
function value(v: any): unknown {
  if (!v) return undefined;
  if ("stringValue" in v) return v.stringValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return v.doubleValue;
  if ("boolValue" in v) return v.boolValue;
  if ("arrayValue" in v) return (v.arrayValue.values ?? []).map(value);
  if ("kvlistValue" in v) return attributes(v.kvlistValue.values);
  return v;
}

// deno-lint-ignore no-explicit-any
function attributes(list: any[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));
}

async function decompressed(req: Request): Promise<Uint8Array> {
  const encoding = req.headers.get("content-encoding");
  if (!req.body) return new Uint8Array();
  if (encoding !== "gzip") return new Uint8Array(await req.arrayBuffer());
  const stream = req.body.pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
