/**
 * @module
 * The Sentry plugin's entry: `loadSentry(config)` imports the SDK and starts it, only when Sentry
 * is configured - with Sentry off the app neither loads nor pays for it. What it returns is the
 * app's `Telemetry` (`server/telemetry.ts`): with Deno's OpenTelemetry tracing the process, Sentry
 * reports errors on Deno's trace (`on_otel.ts`); otherwise the SDK traces requests itself.
 */
import type { Telemetry } from "../server/telemetry.ts";
import type { SentryConfig } from "./config.ts";

export interface OnOtel {
  /** The ratio of new traces Deno samples, if its sampler has one. */
  sampleRate?: number;
}

export async function loadSentry(config: SentryConfig, otel?: OnOtel): Promise<Telemetry> {
  // What a bundler's `__SENTRY_DEBUG__: false` does: the SDK's debug logging (the `debug` option,
  // which we do not offer) otherwise formats a log line for every span, sent or not.
  Object.assign(globalThis, { __SENTRY_DEBUG__: false });
  if (!otel) return (await import("./server.ts")).startSentry(config);
  const [{ otelTelemetry }, { startSentryOnOtel }] = await Promise.all([
    import("../otel/telemetry.ts"),
    import("./on_otel.ts"),
  ]);
  return otelTelemetry(startSentryOnOtel(config, otel.sampleRate));
}
