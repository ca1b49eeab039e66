/**
 * @module
 * An event stream whose source fails, with Sentry on, in-process: the app the entry points make
 * (`appFromEnv`) sends real envelopes from `@sentry/deno` to a receiver on 127.0.0.1. A source that
 * throws is a failure like any other - one JSON line, one event tagged with the same digest, the
 * route and the request id, in the request's transaction; 50 pages reopening a source that always
 * fails write a line each and send one event (a minute per digest); a stream that was ending anyway
 * (the client left, its lifetime is over, the app closes) and an expected error (`httpError`) are
 * none. (Under Deno's OpenTelemetry, `deno task start`'s way: process/telemetry_test.ts.)
 */
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { appFromEnv } from "../lib/cli/app.ts";
import { readSettings } from "../lib/cli/settings.ts";
import { eventStream, type Handlers, httpError, type ServerEvent } from "../lib/mod.ts";
import type { App } from "../lib/server.ts";
import {
  captureLogs,
  isErrorEvent,
  isTransaction,
  type ReceivedItem,
  startSentryReceiver,
} from "shell/testing";
import * as appModule from "./fixture/routes/_app.tsx";
import { memoryManifest } from "./helpers/app.ts";

/** A source that sends one event, then does `then` (when the stream ends, `signal` aborts). */
function streaming(
  then: (signal: AbortSignal) => Promise<never>,
  lifetimeMs = 0,
): { handler: Handlers } {
  return {
    handler: {
      GET: (req, ctx) =>
        eventStream(req, ctx, async function* (signal): AsyncGenerator<ServerEvent> {
          yield { id: 1, event: "entry", data: "first" };
          await then(signal);
        }, { lifetimeMs }),
    },
  };
}

/** Throws once the stream ends, as a KV watch's reader or a closed connection does. */
const throwOnEnd = (signal: AbortSignal): Promise<never> =>
  new Promise((_, reject) =>
    signal.addEventListener("abort", () => reject(new Error("closed under me")), { once: true })
  );

const ROUTES = {
  "_app.tsx": appModule,
  // Each feed's failure its own digest (the message names the feed): a new bug, not a repeat.
  "live/[feed]/broken.ts": {
    handler: {
      GET: (req, ctx) =>
        eventStream(req, ctx, async function* (): AsyncGenerator<ServerEvent> {
          yield { id: 1, event: "entry", data: "first" };
          throw new Error(`the ${ctx.params.feed} feed broke`);
        }),
    } satisfies Handlers,
  },
  "live/refused.ts": streaming(() => Promise.reject(httpError(403, "Not yours any more"))),
  "live/held.ts": streaming(throwOnEnd),
  "live/short.ts": streaming(throwOnEnd, 50),
};

/** What every app here is given besides the test's settings: a KV store in memory. */
const IN_MEMORY: Record<string, string> = { KV_PATH: ":memory:" };

/** No request's async context: `init` here binds its client to no request's scope (sentry_test). */
const atLoad = AsyncLocalStorage.snapshot();

/** The app `main.ts` would make from `env`, with Sentry (re)started for it. */
async function appWith(env: Record<string, string>): Promise<App> {
  const settings = readSettings((name) => env[name] ?? IN_MEMORY[name]);
  const { app } = await atLoad(() => appFromEnv(memoryManifest({ routes: ROUTES }), settings));
  return app;
}

/** Every item captured so far has reached the receiver. */
async function flushed(): Promise<void> {
  const { flush } = await import("@sentry/deno");
  await atLoad(() => flush(5_000));
}

const eventWithDigest = (digest: string) => (item: ReceivedItem) =>
  isErrorEvent(item) && item.payload.tags?.digest === digest;

/** The SDK keeps timers and connections of its own between tests: not leaks of the app's. */
const SDK = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "sentry (server): an event stream's source that fails is a failure, its end is none",
  ...SDK,
  async fn(t) {
    using logs = captureLogs();
    await using receiver = startSentryReceiver();
    const env = { SENTRY_DSN: receiver.dsn, SENTRY_TRACES_SAMPLE_RATE: "1" };
    const app = await appWith(env);
    const failing = "/live/kv-watch/broken";

    /** A broken stream's line and event: the one line with a digest, and its event. */
    async function brokenStream(path = failing) {
      const res = await app.request(path);
      assert.equal(res.status, 200);
      assert.match(
        await res.text(),
        /^retry: 1000\n\nevent: app-build\ndata: [^\n]+\n\nid: 1\nevent: entry\ndata: first\n\n$/,
      );
      const [line, ...more] = logs.of(res).filter((l) => "digest" in l);
      assert.ok(line, "a failure line");
      assert.deepEqual(more, []);
      const event = await receiver.waitFor(eventWithDigest(line.digest));
      return { res, line, event };
    }

    await t.step(
      "a source that throws: one line and one event, same digest, route, request id",
      async () => {
        const { res, line, event } = await brokenStream();
        assert.equal(line.level, "error");
        assert.equal(line.error.message, "the kv-watch feed broke");
        assert.equal(line.method, "GET");
        assert.equal(line.path, failing);
        assert.equal(line.route, "/live/:feed/broken");
        assert.equal(line.status, 500);
        assert.equal(line.request_id, res.headers.get("x-request-id"));

        assert.equal(event.payload.exception.values[0].value, "the kv-watch feed broke");
        assert.equal(event.payload.tags.route, "/live/:feed/broken");
        assert.equal(event.payload.tags.method, "GET");
        assert.equal(event.payload.tags.request_id, line.request_id);
        assert.equal(line.sentry_event_id, event.payload.event_id);
        // In the stream's request transaction, which the trace on the line names.
        const transaction = await receiver.waitFor((item) =>
          isTransaction(item) && item.payload.contexts.trace.trace_id === line.trace_id
        );
        assert.equal(transaction.payload.transaction, "GET /live/:feed/broken");
        assert.equal(event.payload.contexts.trace.trace_id, line.trace_id);
        assert.equal(
          event.payload.contexts.trace.span_id,
          transaction.payload.contexts.trace.span_id,
        );
        await flushed();
        assert.equal(receiver.items.filter(eventWithDigest(line.digest)).length, 1, "sent once");
      },
    );

    await t.step(
      "50 pages reopening a source that always fails: a line each, one event a minute",
      async () => {
        await flushed();
        const from = { items: receiver.items.length, lines: logs.lines.length };
        const path = "/live/always/broken";
        // Each page opens the stream, reads it to its end, and opens it again, as `EventSource`
        // does after `retry` (how soon does not change what is sent: the window is a minute).
        const pages = Array.from({ length: 50 }, async () => {
          for (let round = 0; round < 3; round++) await (await app.request(path)).text();
        });
        await Promise.all(pages);
        await flushed();
        const lines = logs.lines.slice(from.lines).filter((l) => "digest" in l);
        assert.equal(lines.length, 150, "every failure its line");
        const [digest, ...others] = new Set(lines.map((l) => l.digest));
        assert.deepEqual(others, []);
        const events = receiver.items.slice(from.items).filter(isErrorEvent);
        assert.deepEqual(events.map((e) => e.payload.tags.digest), [digest], "one event");
        const [sent, ...more] = lines.filter((l) => l.sentry_event_id !== null);
        assert.deepEqual(more, []);
        assert.equal(sent.sentry_event_id, events[0].payload.event_id);
        // Each repeat's line names the event that stands for it, and has its own trace.
        for (const line of lines.filter((l) => l !== sent)) {
          assert.equal(line.repeat_of, sent.sentry_event_id);
          assert.match(line.trace_id, /^[0-9a-f]{32}$/);
        }
        assert.equal(new Set(lines.map((l) => l.request_id)).size, 150);
        // Another bug in the same minute is no repeat: its event is sent.
        await brokenStream("/live/other/broken");
      },
    );

    /**
     * What follows `end`: no line with a digest and no event, before a broken stream's, which is
     * then the only one of both (so the check cannot pass by looking too early).
     */
    async function nothingFrom(end: () => Promise<void>): Promise<void> {
      await flushed();
      const from = { items: receiver.items.length, lines: logs.lines.length };
      await end();
      const { line } = await brokenStream(`/live/${crypto.randomUUID()}/broken`);
      await flushed();
      const events = receiver.items.slice(from.items).filter(isErrorEvent);
      assert.deepEqual(events.map((e) => e.payload.tags.digest), [line.digest]);
      const lines = logs.lines.slice(from.lines).filter((l) =>
        "digest" in l || l.level === "error"
      );
      assert.deepEqual(lines, [line]);
    }

    /** Opens `path` and reads its first event; returns the reader, the stream still open. */
    async function opened(path: string, from = app) {
      const res = await from.request(path);
      assert.equal(res.status, 200);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!text.includes("data: first")) text += (await reader.read()).value;
      return reader;
    }

    await t.step("the client leaving: nothing logged, nothing sent", async () => {
      await nothingFrom(async () => {
        const reader = await opened("/live/held");
        await reader.cancel();
        // The source's rejection on the end has come and gone.
        await new Promise((resolve) => setTimeout(resolve, 50));
      });
    });

    await t.step("the stream's lifetime over (renew): nothing logged, nothing sent", async () => {
      await nothingFrom(async () => {
        const reader = await opened("/live/short");
        let text = "";
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
          text += read.value;
        }
        assert.match(text, /event: renew/);
      });
    });

    await t.step(
      "an expected error (httpError) from the source: nothing logged, nothing sent",
      async () => {
        await nothingFrom(async () => {
          const res = await app.request("/live/refused");
          assert.match(
            await res.text(),
            /^retry: 1000\n\nevent: app-build\ndata: [^\n]+\n\nid: 1\nevent: entry\ndata: first\n\n$/,
          );
        });
      },
    );

    await t.step("the app closing: nothing logged, nothing sent", async () => {
      await nothingFrom(async () => {
        // An app of its own to close, on the same SDK: the marker stream needs this one open.
        const closing = await appWith(env);
        const reader = await opened("/live/held", closing);
        await closing.close();
        while (!(await reader.read()).done);
        await new Promise((resolve) => setTimeout(resolve, 50));
      });
    });
  },
});
