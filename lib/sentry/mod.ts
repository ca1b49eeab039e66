/**
 * @module
 * The Sentry plugin's entry: `loadSentry(config)` imports the SDK and starts it, only when Sentry
 * is configured — with Sentry off the app neither loads nor pays for it. What it returns is the
 * app's `Telemetry` (`server/telemetry.ts`).
 */
import type { Telemetry } from "../server/telemetry.ts";
import type { SentryConfig } from "./config.ts";

export async function loadSentry(config: SentryConfig): Promise<Telemetry> {
  // What a bundler's `__SENTRY_DEBUG__: false` does: the SDK's debug logging (the `debug` option,
  // which we do not offer) otherwise formats a log line for every span, sent or not.
  Object.assign(globalThis, { __SENTRY_DEBUG__: false });
  return (await import("./server.ts")).startSentry(config);
}
