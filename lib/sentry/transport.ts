/**
 * @module
 * How the server SDK sends to Sentry: `@sentry/deno`'s own fetch transport, but each request with
 * a time limit. Its transport has none, and keeps at most 64 requests in flight (the SDK drops
 * events past them): an ingest that accepts connections and never answers held all 64 slots for
 * good, and no failure reached Sentry again, even once it answered normally. With the limit, a
 * hung request ends after `SEND_TIMEOUT_MS` (its envelope is dropped, as for any network error)
 * and reporting resumes by itself. Built with the SDK's `createTransport`, which keeps the rest of
 * its behaviour: the buffer, rate limits (`429`, `X-Sentry-Rate-Limits`) and client reports.
 */
import type { BaseTransportOptions, Transport, TransportMakeRequestResponse } from "@sentry/core";
import { timeLimit } from "../server/time_limit.ts";
import { createTransport, suppressTracing } from "./sdk.ts";

/**
 * How long one send may take: Sentry's ingest answers in milliseconds, and a server's envelopes
 * are small, so this leaves a slow ingest room while bounding how long a hung one holds a slot.
 */
export const SEND_TIMEOUT_MS = 5_000;

export interface TimedTransportOptions extends BaseTransportOptions {
  headers?: Record<string, string>;
}

export function timedTransport(options: TimedTransportOptions): Transport {
  return createTransport(options, (request) =>
    // No span for the SDK's own posts, as in `@sentry/deno`'s transport.
    suppressTracing(async (): Promise<TransportMakeRequestResponse> => {
      using limit = timeLimit(SEND_TIMEOUT_MS);
      const res = await fetch(options.url, {
        method: "POST",
        body: request.body as BodyInit,
        headers: options.headers,
        referrerPolicy: "strict-origin",
        signal: limit.signal,
      });
      await res.body?.cancel();
      return {
        statusCode: res.status,
        headers: {
          "x-sentry-rate-limits": res.headers.get("X-Sentry-Rate-Limits"),
          "retry-after": res.headers.get("Retry-After"),
        },
      };
    }));
}
