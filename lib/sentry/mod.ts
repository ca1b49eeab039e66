/**
 * @module
 * The server's handle on Sentry: `undefined` unless `SENTRY_DSN` (or `SENTRY_SPOTLIGHT`) is set,
 * and only then is the SDK imported — with Sentry off the app neither loads nor pays for it.
 */
import { sentryConfig } from "./config.ts";
import type { SentryServer } from "./server.ts";

export const sentry: SentryServer | undefined = sentryConfig ? await load() : undefined;

async function load(): Promise<SentryServer> {
  // What a bundler's `__SENTRY_DEBUG__: false` does: the SDK's debug logging (the `debug` option,
  // which we do not offer) otherwise formats a log line for every span, sent or not.
  Object.assign(globalThis, { __SENTRY_DEBUG__: false });
  return (await import("./server.ts")).startSentry(sentryConfig!);
}
