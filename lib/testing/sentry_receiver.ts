/**
 * @module
 * A stand-in for Sentry's ingest on 127.0.0.1: accepts the envelopes the real SDKs post
 * (`/api/{project}/envelope/`, gzip or deflate or plain), parses them with `@sentry/core`'s own
 * `parseEnvelope`, and lets tests wait for items (`event`, `transaction`, ...). It records every
 * request's headers, envelope or not (the OTLP exports `deno task start` sends to a DSN's
 * `/integration/otlp/` endpoints are recorded and answered, never parsed), and can answer slowly,
 * never, or with an error status (and rate-limit headers), to show that a struggling Sentry never
 * hurts the app. Test-only.
 */
import { Arrivals } from "./arrivals.ts";
import { parseEnvelope } from "@sentry/core";

/**
 * One item of an envelope the receiver got: an error event, a transaction, a report, ...
 *
 * @example
 * ```ts
 * import type { ReceivedItem } from "shell/testing";
 * const digestOf = (item: ReceivedItem) => item.payload.tags?.digest as string | undefined;
 * ```
 */
export interface ReceivedItem {
  /** The item type: "event", "transaction", "client_report", ... */
  type: string;
  /** The item itself (an event's `tags`, `exception`, `contexts.trace`, ...). */
  // deno-lint-ignore no-explicit-any -- envelopes carry whatever the SDK put in them
  payload: any;
  /** The envelope's header (`dsn`, `event_id`, `trace`, `sdk`, ...). */
  envelope: Record<string, unknown>;
  /** The path it was posted to. */
  path: string;
}

/**
 * A request as it reached the receiver: the SDK's envelope posts, or anything else sent here.
 *
 * @example
 * ```ts
 * import type { SentryReceiver } from "shell/testing";
 * declare const receiver: SentryReceiver;
 * const gzipped = receiver.requests.filter((r) => r.headers.get("content-encoding") === "gzip");
 * ```
 */
export interface ReceivedRequest {
  /** `POST` for an envelope. */
  method: string;
  /**
   * `/api/{project}/envelope/` for an envelope; `/api/{project}/integration/otlp/v1/traces` for
   * OTLP.
   */
  path: string;
  /** As sent (`Content-Encoding`, `Origin`, ...). */
  headers: Headers;
}

/**
 * How the receiver answers: at once with 200 unless told otherwise.
 *
 * @example A Sentry that rate-limits
 * ```ts
 * import { startSentryReceiver } from "shell/testing";
 * await using limited = startSentryReceiver({ status: 429, headers: { "Retry-After": "60" } });
 * ```
 */
export interface ReceiverOptions {
  /** Wait this long before answering each request; `Infinity` never answers (until closed). */
  delayMs?: number;
  /** Answer with this status (e.g. 500 or 429) instead of 200. */
  status?: number;
  /** Headers to answer with, e.g. `Retry-After` and `X-Sentry-Rate-Limits` beside a 429. */
  headers?: Record<string, string>;
}

/**
 * A running receiver: its DSN, what it received, and a way to wait for an item.
 *
 * @example
 * ```ts
 * import { isTransaction, type SentryReceiver, startSentryReceiver } from "shell/testing";
 * await using receiver: SentryReceiver = startSentryReceiver();
 * const env = { SENTRY_DSN: receiver.dsn, SENTRY_TRACES_SAMPLE_RATE: "1" };
 * ```
 */
export interface SentryReceiver extends AsyncDisposable {
  /** The port it listens on, on 127.0.0.1. */
  port: number;
  /** A DSN for this receiver: `http://publickey@127.0.0.1:PORT/1`. */
  dsn: string;
  /** Every item received so far, in order. */
  items: ReceivedItem[];
  /** Every envelope's body as it was posted (decompressed), in order. */
  bodies: string[];
  /** Every request received so far, in order (recorded before any delay). */
  requests: ReceivedRequest[];
  /** How many envelopes were posted. */
  envelopes(): number;
  /** Resolves with the first item (received or to come) that matches, within `ms`. */
  waitFor(predicate: (item: ReceivedItem) => boolean, ms?: number): Promise<ReceivedItem>;
  /** Stops it: requests it still holds (`delayMs`) are answered at once. */
  close(): Promise<void>;
}

/**
 * True for an error event.
 *
 * @example
 * ```ts
 * import { isErrorEvent, type SentryReceiver } from "shell/testing";
 * declare const receiver: SentryReceiver;
 * const event = await receiver.waitFor(isErrorEvent);
 * ```
 */
export const isErrorEvent = (item: ReceivedItem): boolean => item.type === "event";

/**
 * True for a transaction (a request's or a page load's trace).
 *
 * @example
 * ```ts
 * import { isTransaction, type SentryReceiver } from "shell/testing";
 * declare const receiver: SentryReceiver;
 * const served = await receiver.waitFor((i) => isTransaction(i) && i.payload.transaction === "GET /");
 * ```
 */
export const isTransaction = (item: ReceivedItem): boolean => item.type === "transaction";

/**
 * Starts a receiver on a free port of 127.0.0.1; give the app its `dsn` (`SENTRY_DSN`).
 *
 * @example An expected error (a 404) sends nothing; a failure sends its digest
 * ```ts
 * import assert from "node:assert/strict";
 * import { isErrorEvent, startSentryReceiver } from "shell/testing";
 *
 * await using receiver = startSentryReceiver();
 * // ... start the app with SENTRY_DSN=receiver.dsn, ask for a page that fails ...
 * const event = await receiver.waitFor(isErrorEvent);
 * assert.ok(event.payload.tags.digest);
 * ```
 */
export function startSentryReceiver(options: ReceiverOptions = {}): SentryReceiver {
  const items: ReceivedItem[] = [];
  const requests: ReceivedRequest[] = [];
  const bodies: string[] = [];
  const arrivals = new Arrivals();
  const closing = new AbortController();
  let envelopes = 0;

  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen() {},
  }, async (req) => {
    const url = new URL(req.url);
    requests.push({ method: req.method, path: url.pathname, headers: req.headers });
    // `deno task start` with a DSN exports Deno's OpenTelemetry to the DSN's OTLP endpoints: those
    // posts are no envelopes (protobuf), so they are recorded as requests and answered, not parsed.
    if (req.method === "POST" && !url.pathname.includes("/integration/otlp/")) {
      const body = await decompressed(req);
      envelopes++;
      bodies.push(new TextDecoder().decode(body));
      const [envelope, entries] = parseEnvelope(body);
      for (const [header, payload] of entries) {
        items.push({
          type: String(header.type),
          payload: payload instanceof Uint8Array ? asJson(payload) : payload,
          envelope: envelope as Record<string, unknown>,
          path: url.pathname,
        });
      }
      arrivals.arrived();
    }
    if (options.delayMs) await delay(options.delayMs, closing.signal);
    // As Sentry does: browsers post from any origin.
    const headers = { "Access-Control-Allow-Origin": "*", ...options.headers };
    return new Response(null, { status: options.status ?? 200, headers });
  });
  const { port } = server.addr;

  return {
    port,
    dsn: `http://publickey@127.0.0.1:${port}/1`,
    items,
    bodies,
    requests,
    envelopes: () => envelopes,
    waitFor(predicate, ms = 10_000) {
      return arrivals.until(() => items.find(predicate), ms, () => {
        const seen = items.map((i) => `${i.type} ${i.payload?.transaction ?? ""}`);
        return `no matching Sentry item within ${ms} ms; received: ${seen.join(", ")}`;
      });
    },
    async close() {
      closing.abort();
      await server.shutdown();
    },
    [Symbol.asyncDispose]() {
      return this.close();
    },
  };
}

async function decompressed(req: Request): Promise<Uint8Array> {
  const encoding = req.headers.get("content-encoding");
  if (!req.body) return new Uint8Array();
  if (encoding !== "gzip" && encoding !== "deflate") return new Uint8Array(await req.arrayBuffer());
  const stream = req.body.pipeThrough(new DecompressionStream(encoding));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function asJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return bytes;
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = Number.isFinite(ms) ? setTimeout(resolve, ms) : undefined;
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
