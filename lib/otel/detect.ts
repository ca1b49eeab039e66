/**
 * @module
 * Whether Deno's OpenTelemetry traces this process: `OTEL_DENO=true` at its start, or Deno Deploy;
 * and at what ratio its sampler keeps new traces.
 * Deno then registers its tracer provider as `@opentelemetry/api`'s global before any module runs.
 * Read from that registration rather than the environment: Deno reads `OTEL_DENO` only at start
 * (setting it later changes nothing), and a platform may turn tracing on without it. Imports
 * nothing, so that the check costs no OpenTelemetry code when tracing is off; and apart from the
 * launcher's `env.ts`, which a server would hold for good for one function.
 */

const API = Symbol.for("opentelemetry.js.api.1");

export function denoTracing(): boolean {
  const api = (globalThis as { [API]?: { trace?: unknown } })[API];
  const deno = (Deno as { telemetry?: { tracerProvider?: unknown } }).telemetry;
  return api?.trace !== undefined && api.trace === deno?.tracerProvider;
}

/**
 * The ratio of new traces Deno's sampler keeps, as `OTEL_TRACES_SAMPLER` and its argument say: for
 * the `sample_rate` and `sample_rand` of the trace's Sentry DSC. Undefined when it is no ratio.
 */
export function headSampleRate(env: (name: string) => string | undefined): number | undefined {
  const sampler = env("OTEL_TRACES_SAMPLER") ?? "always_on"; // Deno's default
  if (sampler.endsWith("always_on")) return 1;
  if (sampler.endsWith("always_off")) return 0;
  if (!sampler.endsWith("traceidratio")) return undefined;
  const ratio = Number(env("OTEL_TRACES_SAMPLER_ARG") ?? 1);
  return ratio >= 0 && ratio <= 1 ? ratio : undefined;
}
