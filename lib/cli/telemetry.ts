/**
 * @module
 * Which telemetry the app gets: Sentry when it is configured - on the trace of Deno's OpenTelemetry
 * when that traces the process, with its own tracing otherwise - Deno's OpenTelemetry alone when
 * only that is on, and nothing at all (no module of either loaded) when neither is.
 */
import { denoTracing, headSampleRate } from "../otel/detect.ts";
import type { SentryConfig } from "../sentry/config.ts";
import { loadSentry } from "../sentry/mod.ts";
import type { Telemetry } from "../server/telemetry.ts";

export async function loadTelemetry(sentry?: SentryConfig): Promise<Telemetry | undefined> {
  const otel = denoTracing()
    ? { sampleRate: headSampleRate((name) => Deno.env.get(name)) }
    : undefined;
  if (sentry) return await loadSentry(sentry, otel);
  if (otel) return (await import("../otel/telemetry.ts")).otelTelemetry();
  return undefined;
}
