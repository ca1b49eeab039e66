/**
 * @module
 * Whether Deno's OpenTelemetry traces this process: `OTEL_DENO=true` at its start, or Deno Deploy.
 * Deno then registers its tracer provider as `@opentelemetry/api`'s global before any module runs.
 * Read from that registration rather than the environment: Deno reads `OTEL_DENO` only at start
 * (setting it later changes nothing), and a platform may turn tracing on without it. Imports nothing,
 * so that the check costs no OpenTelemetry code when tracing is off.
 */

const API = Symbol.for("opentelemetry.js.api.1");

export function denoTracing(): boolean {
  const api = (globalThis as { [API]?: { trace?: unknown } })[API];
  const deno = (Deno as { telemetry?: { tracerProvider?: unknown } }).telemetry;
  return api?.trace !== undefined && api.trace === deno?.tracerProvider;
}
