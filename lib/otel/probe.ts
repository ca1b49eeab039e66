/**
 * @module
 * One look, at start-up, at the OTLP endpoint Deno's OpenTelemetry exports traces to: Deno's
 * exporter drops a batch the endpoint refuses (a closed port, a 401 for a wrong key, a 500) without
 * a word on stdout or stderr, so traces just vanish. The probe posts an empty export request (valid
 * OTLP: no spans) to the same URL, with the same headers and protocol, and a refusal is said in one
 * `warn` line - a redirect too, which the exporter does not follow. Once per process, never per
 * batch or span: an endpoint that goes down later is not seen here (docs/telemetry.md says what to
 * watch). Not on Deno Deploy, whose platform exports.
 */
import { context, createContextKey, ROOT_CONTEXT } from "@opentelemetry/api";
import { log } from "../server/log.ts";

type Env = (name: string) => string | undefined;

/** How long the probe waits for an answer: an endpoint slower than that loses batches too. */
const PROBE_MS = 5_000;

/** Deno's fetch makes no span for the probe under this (OpenTelemetry's "suppress tracing" key). */
const UNTRACED = ROOT_CONTEXT.setValue(
  createContextKey("OpenTelemetry SDK Context Key SUPPRESS_TRACING"),
  true,
);

/** Where Deno posts traces, with what headers and body, as its `OTEL_*` variables say. */
export function tracesExport(
  env: Env,
): { url: string; headers: Headers; body: string } | undefined {
  const protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ??
    env("OTEL_EXPORTER_OTLP_PROTOCOL") ??
    "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json") return undefined; // not over HTTP
  const own = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const base = env("OTEL_EXPORTER_OTLP_ENDPOINT") ?? "http://localhost:4318";
  const url = own ?? `${base.replace(/\/+$/, "")}/v1/traces`;
  const headers = new Headers({
    "Content-Type": protocol === "http/json" ? "application/json" : "application/x-protobuf",
  });
  const listed = env("OTEL_EXPORTER_OTLP_TRACES_HEADERS") ?? env("OTEL_EXPORTER_OTLP_HEADERS") ??
    "";
  for (const pair of listed.split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    try {
      headers.set(
        decodeURIComponent(pair.slice(0, at).trim()),
        decodeURIComponent(pair.slice(at + 1).trim()),
      );
    } catch { /* Deno drops such a header too */ }
  }
  // An empty ExportTraceServiceRequest: no bytes in protobuf, `{}` in JSON.
  return { url, headers, body: protocol === "http/json" ? "{}" : "" };
}

/** Posts the empty export; a refusal or no answer is one `warn` line. Never throws. */
export async function probeOtlp(env: Env): Promise<void> {
  const target = tracesExport(env);
  if (!target) return;
  const { url, headers, body } = target;
  const said = { endpoint: endpointOf(url) };
  const warn = (why: string) =>
    log("warn", `OpenTelemetry: the OTLP endpoint refuses traces (${why}): they are lost`, said);
  const signal = AbortSignal.timeout(PROBE_MS);
  try {
    const res = await context.with(
      UNTRACED,
      // Not followed: Deno's exporter does not follow one either (its batches are lost), and the
      // headers may hold an API key, which is not to go wherever a redirect points.
      () => fetch(url, { method: "POST", headers, body, signal, redirect: "manual" }),
    );
    await res.body?.cancel();
    if (!res.ok) warn(`HTTP ${res.status}`);
  } catch (error) {
    warn(signal.aborted ? `no answer within ${PROBE_MS} ms` : String(error).slice(0, 200));
  }
}

/** The URL without what may hold a secret: credentials and the query. */
function endpointOf(url: string): string {
  const parsed = URL.parse(url);
  return parsed ? `${parsed.origin}${parsed.pathname}` : "(not a URL)";
}
