/**
 * @module
 * The server's handle on Sentry: `undefined` unless `SENTRY_DSN` (or `SENTRY_SPOTLIGHT`) is set,
 * and only then is the SDK imported — with Sentry off the app neither loads nor pays for it.
 */
import { sentryConfig } from "./config.ts";
import type { SentryServer } from "./server.ts";

export const sentry: SentryServer | undefined = sentryConfig
  ? (await import("./server.ts")).startSentry(sentryConfig)
  : undefined;
