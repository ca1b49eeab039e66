/**
 * @module
 * Sentry on the server, in-process: the app the entry points make (`appFromEnv`) from settings
 * naming a receiver on 127.0.0.1, which reads what the real `@sentry/deno` sends. Failures with
 * their digest, route-named transactions, continued traces, tracing headers on outgoing fetches
 * (as `tracePropagationTargets` allows, never to Sentry's own host), silence for not-found, action
 * calls, the tunnel, Spotlight, and Sentry off. One SDK per process: each test starts it with its
 * own settings, one after the other. (SIGTERM's flush and a struggling Sentry need a process of
 * their own each: process/sentry_process_test.ts.)
 */
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { Suspense, use } from "react";
import { encodeCall } from "../lib/shared/action_wire.ts";
import { appFromEnv } from "../lib/cli/app.ts";
import { readSettings } from "../lib/cli/settings.ts";
import { browserConnectSources, readSentryConfig } from "../lib/sentry/config.ts";
import { notFound, type PageProps } from "../lib/mod.ts";
import type { App } from "../lib/server.ts";
import * as appModule from "./fixture/routes/_app.tsx";
import * as layoutModule from "./fixture/routes/_layout.tsx";
import * as time from "./fixture/routes/api/time.ts";
import * as slug from "./fixture/routes/blog/[slug].tsx";
import * as docs from "./fixture/routes/docs/[...path].tsx";
import {
  captureLogs,
  isErrorEvent,
  isTransaction,
  type ReceivedItem,
  startSentryReceiver,
} from "shell/testing";
import { actionIdOf, memoryManifest } from "./helpers/app.ts";
import { defineJobs, kvOf } from "../lib/data.ts";
import * as probe from "./helpers/probe_actions.ts";
import { recordingUpstream } from "./helpers/upstream.ts";

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const PARENT_SPAN = "b7ad6b7169203331";
const ORIGIN = "http://localhost";

/** What the upstream routes fetch, set by each test before it asks them. */
let upstreamUrls: string[] = [];

/** An island: only a page with one runs the browser SDK, and carries the trace's meta tags. */
function Badge() {
  return <b>badge</b>;
}

function Late({ failing }: { failing: Promise<string> }) {
  return <p>{use(failing)}</p>;
}

const ROUTES = {
  "_app.tsx": appModule,
  "_layout.tsx": layoutModule,
  "_404.tsx": {
    default: function NotFound({ url }: PageProps) {
      if (url.pathname === "/broken-404") throw new Error("the 404 page broke");
      return <h1>Page not found</h1>;
    },
  },
  "blog/[slug].tsx": slug,
  "docs/[...path].tsx": docs,
  "api/time.ts": time,
  // Static routes beside [slug] and [...path]: the one answering names the transaction.
  "blog/new.tsx": { default: () => <h1>New post</h1> },
  "docs/index.tsx": { default: () => <h1>Docs</h1> },
  "about.tsx": { default: () => <h1>About</h1> },
  "island.tsx": { default: () => <Badge /> },
  "marker.ts": { handler: () => new Response("marker") },
  "boom.tsx": {
    default: function Boom(): never {
      throw new Error("secret boom");
    },
  },
  // Fails `?ms=` (50) after the shell went out.
  "late.tsx": {
    default: function Page({ url }: PageProps) {
      const ms = Number(url.searchParams.get("ms") ?? 50);
      const failing = new Promise<string>((_, reject) =>
        setTimeout(() => reject(new Error("late boom")), ms)
      );
      return (
        <Suspense fallback={<p>loading</p>}>
          <Late failing={failing} />
        </Suspense>
      );
    },
  },
  "gone-later.tsx": {
    default: function Page() {
      const post = new Promise<string>((_, reject) => setTimeout(() => reject(notFound()), 50));
      return (
        <Suspense fallback={<p>loading</p>}>
          <Late failing={post} />
        </Suspense>
      );
    },
  },
  // Waits on an upstream that never answers: the request's deadline ends it.
  "stuck.ts": { handler: { GET: () => new Promise<Response>(() => {}) } },
  "throw-value.ts": {
    handler: {
      GET() {
        throw { reason: "not an Error" };
      },
    },
  },
  "unhandled.ts": {
    handler: {
      GET() {
        Promise.reject(new Error("nobody awaited this"));
        return new Response("answered");
      },
    },
  },
  "upstream.ts": {
    handler: {
      async GET() {
        const res = await fetch(upstreamUrls[0]);
        return new Response(await res.text());
      },
    },
  },
  "upstreams.ts": {
    handler: {
      async GET() {
        const statuses = [];
        for (const url of upstreamUrls) {
          const res = await fetch(url);
          await res.body?.cancel();
          statuses.push(res.status);
        }
        return Response.json(statuses);
      },
    },
  },
};

const PROBE = "routes/_probe/actions.ts";
/** A background job that always fails, tried once (`lib/kv/jobs/`). */
const JOBS = defineJobs({
  fails: {
    retries: [],
    run() {
      throw new Error("the mail provider is down");
    },
  },
});

const MANIFEST = memoryManifest({
  routes: {
    ...ROUTES,
    "enqueue-job.ts": {
      handler: {
        async POST(_req, ctx) {
          await JOBS.enqueue(kvOf(ctx), "fails", undefined);
          return new Response(null, { status: 202 });
        },
      },
    },
  },
  islands: { Badge },
  actions: { [PROBE]: probe },
  jobs: JOBS,
});

/** What every app here is given besides the test's settings: a KV store in memory. */
const IN_MEMORY: Record<string, string> = { KV_PATH: ":memory:" };

/**
 * This module's async context when it loaded: no request's. Deno leaves a request's context current
 * after its first `import()` of a module (see `lib/server/fresh_context.ts`), so a test after such a
 * request starts in it, and `init` there would bind its new client to that request's scope.
 */
const atLoad = AsyncLocalStorage.snapshot();

/** The app `main.ts` would make from `env`, with Sentry (re)started for it, as at startup. */
async function appWith(env: Record<string, string>): Promise<App> {
  // A store in memory: never the project's `.data/`.
  const settings = readSettings((name) => env[name] ?? IN_MEMORY[name]);
  const { app } = await atLoad(() => appFromEnv(MANIFEST, settings));
  return app;
}

function sentryEnv(dsn: string, more: Record<string, string> = {}): Record<string, string> {
  return { SENTRY_DSN: dsn, SENTRY_TRACES_SAMPLE_RATE: "1", ...more };
}

/** `flush` of the SDK started last: every item captured so far has reached its receiver. */
async function flushed(): Promise<void> {
  const { flush } = await import("@sentry/deno");
  await atLoad(() => flush(5_000));
}

function digestOnPage(html: string): string {
  const match = html.match(/Digest: (?:<code>|\\u003ccode>)?([0-9A-Z-]+)/);
  assert.ok(match, `no digest on the page:\n${html}`);
  return match[1];
}

const traceOfItem = (item: ReceivedItem): string => item.payload.contexts.trace.trace_id;
const named = (name: string) => (item: ReceivedItem) =>
  isTransaction(item) && item.payload.transaction === name;
const eventWithDigest = (digest: string) => (item: ReceivedItem) =>
  isErrorEvent(item) && item.payload.tags?.digest === digest;

interface ClientSpan {
  op: string;
  description: string;
  span_id: string;
  data: Record<string, unknown>;
}

/** A transaction's `http.client` spans: one per outgoing fetch. */
const clientSpans = (transaction: ReceivedItem): ClientSpan[] =>
  transaction.payload.spans.filter((span: ClientSpan) => span.op === "http.client");

const TRACE_HEADERS = ["sentry-trace", "baggage", "traceparent"];

/** Which of the three tracing headers a request carried. */
const traceHeadersIn = (headers: Headers): string[] =>
  TRACE_HEADERS.filter((name) => headers.has(name));

/** All three tracing headers, for the transaction's trace and the fetch's `http.client` span. */
function assertCarriesTrace(headers: Headers, transaction: ReceivedItem, span: ClientSpan): void {
  const traceId = traceOfItem(transaction);
  assert.equal(headers.get("sentry-trace"), `${traceId}-${span.span_id}-1`);
  assert.equal(headers.get("traceparent"), `00-${traceId}-${span.span_id}-01`);
  assert.match(headers.get("baggage") ?? "", new RegExp(`sentry-trace_id=${traceId}`));
}

/** The SDK keeps timers and connections of its own between tests: not leaks of the app's. */
const SDK = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "sentry (server): failures, transactions, traces, actions and the tunnel",
  ...SDK,
  async fn(t) {
    using logs = captureLogs();
    await using receiver = startSentryReceiver();
    const app = await appWith(sentryEnv(receiver.dsn, { SENTRY_TUNNEL: "1" }));
    const get = async (path: string, init?: RequestInit) => {
      const res = await app.request(path, init);
      return { res, body: await res.text() };
    };
    const logLine = (digest: string) => logs.lines.find((l) => l.digest === digest);

    await t.step(
      "a failure: one event, tagged with the digest of the page and the log",
      async () => {
        const { res, body } = await get("/boom");
        assert.equal(res.status, 500);
        const digest = digestOnPage(body);
        const line = logLine(digest)!;

        const event = await receiver.waitFor(eventWithDigest(digest));
        assert.equal(event.payload.tags.route, "/boom");
        assert.equal(event.payload.tags.method, "GET");
        assert.equal(event.payload.tags.request_id, line.request_id);
        assert.equal(event.payload.exception.values[0].value, "secret boom");
        assert.equal(line.sentry_event_id, event.payload.event_id);
        assert.equal(line.trace_id, event.payload.contexts.trace.trace_id);

        const transaction = await receiver.waitFor(named("GET /boom"));
        assert.equal(transaction.payload.contexts.trace.trace_id, line.trace_id);
        assert.equal(transaction.payload.contexts.trace.status, "internal_error");
        await flushed();
        assert.equal(receiver.items.filter(eventWithDigest(digest)).length, 1, "captured once");
      },
    );

    await t.step(
      "a transaction named by the route pattern, continuing the caller's trace",
      async () => {
        const headers = {
          "sentry-trace": `${TRACE_ID}-${PARENT_SPAN}-1`,
          baggage: `sentry-trace_id=${TRACE_ID},sentry-sampled=true,sentry-sample_rate=1`,
        };
        const { res, body: plain } = await get("/blog/first-post", { headers });
        assert.equal(res.status, 200);
        const { payload } = await receiver.waitFor(named("GET /blog/:slug"));
        assert.equal(payload.contexts.trace.op, "http.server");
        assert.equal(payload.contexts.trace.trace_id, TRACE_ID);
        assert.equal(payload.contexts.trace.parent_span_id, PARENT_SPAN);
        assert.equal(payload.contexts.trace.data["http.response.status_code"], 200);
        // A page that runs no JavaScript carries no trace: nothing there would read it.
        assert.doesNotMatch(plain, /<meta name="(sentry-trace|baggage)"/);
        // A page with an island hands the same trace to the browser SDK.
        const { body } = await get("/island", { headers });
        assert.match(
          body,
          new RegExp(`<meta name="sentry-trace" content="${TRACE_ID}-[0-9a-f]{16}-1"`),
        );
        assert.match(body, /<meta name="baggage" content="[^"]*sentry-trace_id=/);
      },
    );

    await t.step(
      "a caller's baggage past W3C's 8,192 bytes: the trace goes on, its DSC is not the caller's",
      async () => {
        // Attack 9: the SDK kept a caller's DSC whatever its size, in every envelope of the trace.
        const traceId = "6b8efff798038103d269b633813fc60c";
        const { res } = await get("/blog/second-post?junk", {
          headers: {
            "sentry-trace": `${traceId}-${PARENT_SPAN}-1`,
            baggage: `sentry-trace_id=${traceId},sentry-junk=${"x".repeat(20_000)}`,
          },
        });
        assert.equal(res.status, 200);
        const { payload, envelope } = await receiver.waitFor((item) =>
          named("GET /blog/:slug")(item) && item.payload.contexts.trace.trace_id === traceId
        );
        assert.equal(payload.contexts.trace.parent_span_id, PARENT_SPAN);
        const dsc = envelope.trace as Record<string, string>;
        assert.equal(dsc.junk, undefined);
        assert.ok(JSON.stringify(envelope).length < 1_000, "the envelope's header");
      },
    );

    await t.step(
      "a client's method of any length: the transaction's name and method carry 32 characters of it",
      async () => {
        // Any token is a method to HTTP: a 5,000-character one named the transaction whole, and
        // went into its envelope twice, as the log lines and the failure tag no longer carry it.
        const traceId = "7c9f00a798038103d269b633813fc60d";
        const { res } = await get("/blog/second-post", {
          method: "M".repeat(5_000),
          headers: { "sentry-trace": `${traceId}-${PARENT_SPAN}-1` },
        });
        assert.equal(res.status, 405);
        const { payload } = await receiver.waitFor((item) =>
          item.payload.contexts?.trace?.trace_id === traceId
        );
        assert.match(
          String(payload.transaction),
          /^M{32}\u2026 \(5000 characters\) \/blog\/:slug$/,
        );
        assert.ok(!JSON.stringify(payload).includes("M".repeat(33)), "nowhere whole");
      },
    );

    await t.step(
      "a client's path of any length: the transaction carries 1,024 characters of it",
      async () => {
        // A path is the client's to choose, tens of kilobytes if it likes: the transaction's
        // url.path, its request's URL (and its name until the router renamed it) carried it
        // whole, as log lines no longer do.
        const traceId = "5b1e7d3c0a9f48e2b6c4d2a1f0e9d8c7";
        const path = `/docs/${"p".repeat(5_000)}`;
        const { res } = await get(path, {
          headers: { "sentry-trace": `${traceId}-${PARENT_SPAN}-1` },
        });
        assert.equal(res.status, 200);
        const { payload } = await receiver.waitFor((item) =>
          item.payload.contexts?.trace?.trace_id === traceId
        );
        assert.equal(payload.transaction, "GET /docs/:path+");
        assert.match(
          String(payload.contexts.trace.data["url.path"]),
          new RegExp(`^/docs/p{1018}\u2026 \\(${path.length} characters\\)$`),
        );
        assert.ok(!JSON.stringify(payload).includes("p".repeat(1_019)), "nowhere whole");
      },
    );

    await t.step(
      "a client's headers and query of any length: the transaction carries 1,024 characters of each",
      async () => {
        // Headers are the client's to choose as much as its path: a header of its own of tens of
        // kilobytes, and the query string (the SDK's own field, apart from the URL), each whole in
        // every sampled transaction and error event of the request.
        const traceId = "6c2f8e4d1b0a49f3c7d5e3b2a1f0e9d8";
        const forwarded = Array.from({ length: 3_000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`)
          .join(", ");
        const { res } = await get(`/about?q=${"q".repeat(20_000)}`, {
          headers: {
            "sentry-trace": `${traceId}-${PARENT_SPAN}-1`,
            "x-forwarded-for": forwarded,
            "x-note": "h".repeat(20_000),
          },
        });
        assert.equal(res.status, 200);
        const { payload } = await receiver.waitFor((item) =>
          item.payload.contexts?.trace?.trace_id === traceId
        );
        const headers = payload.request.headers;
        assert.match(headers["x-note"], /^h{1024}\u2026 \(20000 characters\)$/);
        // (The SDK leaves X-Forwarded-For out without sendDefaultPii; clipped, were it sent.)
        assert.ok((headers["x-forwarded-for"] ?? "").length < 1_100, "X-Forwarded-For clipped");
        // And the query, as its URL carries it: 1,024 characters of path and query.
        assert.ok(String(payload.request.query_string).length < 1_100, "the query clipped");
        const whole = JSON.stringify(payload);
        assert.ok(!whole.includes("h".repeat(1_025)) && !whole.includes("q".repeat(1_025)));
      },
    );

    await t.step(
      "overlapping routes: the transaction is named by the route that answered",
      async () => {
        const names: Record<string, string> = {
          "/blog/new": "GET /blog/new",
          "/blog/second-post": "GET /blog/:slug",
          "/docs": "GET /docs",
          "/docs/getting/started": "GET /docs/:path+",
        };
        for (const [path, name] of Object.entries(names)) {
          const { res } = await get(path);
          assert.equal(res.status, 200, path);
          // Named so, and for this very request: an earlier step asked /blog/first-post.
          const { payload } = await receiver.waitFor((item) =>
            named(name)(item) && item.payload.request.url === ORIGIN + path
          );
          assert.equal(payload.transaction_info.source, "route");
        }
      },
    );

    await t.step("an unhandled rejection: captured with its digest, the app lives on", async () => {
      const { body } = await get("/unhandled");
      assert.equal(body, "answered");
      const event = await receiver.waitFor((i) =>
        isErrorEvent(i) && i.payload.exception.values[0].value === "nobody awaited this"
      );
      const line = logs.lines.find((l) => String(l.msg).startsWith("Unhandled rejection"));
      assert.ok(line, "logged");
      assert.equal(event.payload.tags.digest, line.digest);
      assert.equal(event.payload.event_id, line.sentry_event_id);
      assert.equal((await get("/about")).res.status, 200);
    });

    await t.step("a thrown non-Error: captured once, its transaction ends as a 500", async () => {
      const { res, body } = await get("/throw-value");
      assert.equal(res.status, 500);
      const digest = digestOnPage(body);
      const event = await receiver.waitFor(eventWithDigest(digest));
      const transaction = await receiver.waitFor(named("GET /throw-value"));
      assert.equal(transaction.payload.contexts.trace.status, "internal_error");
      assert.equal(traceOfItem(transaction), traceOfItem(event));
      await flushed();
      assert.equal(receiver.items.filter(eventWithDigest(digest)).length, 1, "captured once");
    });

    await t.step(
      "a failure after the shell: captured once, inside the page's transaction",
      async () => {
        const { res, body } = await get("/late");
        assert.equal(res.status, 200);
        const digest = digestOnPage(body);
        const event = await receiver.waitFor(eventWithDigest(digest));
        assert.equal(event.payload.tags.route, "/late");
        const transaction = await receiver.waitFor(named("GET /late"));
        assert.equal(traceOfItem(event), traceOfItem(transaction));
        assert.equal(
          event.payload.contexts.trace.span_id,
          transaction.payload.contexts.trace.span_id,
        );
        await flushed();
        assert.equal(receiver.items.filter(eventWithDigest(digest)).length, 1, "captured once");
      },
    );

    await t.step("a W3C traceparent is continued too", async () => {
      await get("/api/time", { headers: { traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-01` } });
      const { payload } = await receiver.waitFor(named("GET /api/time"));
      assert.equal(payload.contexts.trace.trace_id, TRACE_ID);
      assert.equal(payload.contexts.trace.parent_span_id, PARENT_SPAN);
    });

    await t.step("an outgoing fetch: an http.client span and the trace's headers", async () => {
      await using upstream = recordingUpstream();
      upstreamUrls = [`${upstream.origin}/data`];
      assert.equal((await get("/upstream")).body, "ok");
      const transaction = await receiver.waitFor(named("GET /upstream"));
      // One span: the SDK's own posts to the ingest host make none.
      const [client, ...more] = clientSpans(transaction);
      assert.deepEqual(more, []);
      assert.equal(client.description, `GET ${upstream.origin}/data`);
      assert.equal(client.data["http.response.status_code"], 200);
      assertCarriesTrace(upstream.seen[0], transaction, client);
    });

    await t.step(
      "no tracing headers to Sentry's own host: not on the app's fetch to it, not on the SDK's posts",
      async () => {
        await using upstream = recordingUpstream();
        // One transaction fetches a harmless path on the ingest host, then the upstream.
        upstreamUrls = [`http://127.0.0.1:${receiver.port}/harmless`, `${upstream.origin}/data`];
        assert.equal((await get("/upstreams")).body, "[200,200]");
        const transaction = await receiver.waitFor(named("GET /upstreams"));
        const [client, ...more] = clientSpans(transaction);
        assert.deepEqual(more, [], "no span for the fetch to the ingest host");
        assert.equal(client.description, `GET ${upstream.origin}/data`);
        assertCarriesTrace(upstream.seen[0], transaction, client);

        const [toIngest] = receiver.requests.filter((r) => r.path === "/harmless");
        assert.deepEqual(traceHeadersIn(toIngest.headers), []);
        const posts = receiver.requests.filter((r) => r.method === "POST");
        assert.ok(posts.length > 0);
        assert.deepEqual(posts.flatMap((r) => traceHeadersIn(r.headers)), [], "the SDK's posts");
      },
    );

    await t.step("concurrent requests keep their own traces", async () => {
      await using upstream = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen() {} },
        async (req) => {
          await new Promise((resolve) => setTimeout(resolve, 50)); // overlap the requests
          return new Response(req.headers.get("sentry-trace"));
        },
      );
      upstreamUrls = [`http://127.0.0.1:${upstream.addr.port}/data`];
      const traceIds = Array.from({ length: 6 }, (_, i) => TRACE_ID.slice(0, -1) + i);
      const forwarded = await Promise.all(traceIds.map(async (traceId) => {
        const { body } = await get("/upstream", {
          headers: { "sentry-trace": `${traceId}-${PARENT_SPAN}-1` },
        });
        return body.split("-")[0];
      }));
      assert.deepEqual(forwarded, traceIds);
    });

    await t.step(
      "not-found sends nothing: unknown URL, notFound() before and after the shell, a throwing _404",
      async () => {
        await flushed();
        const from = receiver.items.length;
        for (const path of ["/no/such/page", "/blog/unknown-post"]) {
          const { res, body } = await get(path);
          assert.equal(res.status, 404);
          assert.doesNotMatch(body, /sentry-trace|baggage|_app\/sentry/);
        }
        // After the shell the status is sent; the page is marked noindex instead.
        const late = await get("/gone-later");
        assert.equal(late.res.status, 200);
        assert.match(late.body, /noindex/);
        const broken = await get("/broken-404");
        assert.equal(broken.res.status, 500);
        const line = logLine(digestOnPage(broken.body));
        assert.equal(line?.sentry_event_id, null);
        // A request that is reported, after those: once it arrives, the earlier ones had their turn.
        await get("/marker");
        await receiver.waitFor(named("GET /marker"));
        await flushed();
        assert.deepEqual(
          receiver.items.slice(from).map((i) => `${i.type} ${i.payload.transaction ?? ""}`),
          ["transaction GET /marker"],
        );
      },
    );

    await t.step(
      "an action call's span is named after the action, in the caller's trace",
      async () => {
        const traceId = "5b8efff798038103d269b633813fc60c";
        const call = (name: string, headers: HeadersInit = {}) =>
          app.request(`/_action/${actionIdOf(PROBE, name)}`, {
            method: "POST",
            body: encodeCall([1]),
            headers: { Origin: ORIGIN, ...headers },
          });
        const res = await call("echo", {
          "sentry-trace": `${traceId}-b7ad6b7169203331-1`,
          baggage: `sentry-trace_id=${traceId},sentry-sampled=true,sentry-sample_rate=1`,
        });
        await res.body?.cancel();
        const { payload } = await receiver.waitFor(named("action echo"));
        assert.equal(payload.contexts.trace.trace_id, traceId);

        const failed = await call("fail");
        const { digest } = await failed.json();
        await receiver.waitFor(eventWithDigest(digest));
        await receiver.waitFor(named("action fail"));
      },
    );

    await t.step("a refused action call is no failure: no digest, no event", async () => {
      await flushed();
      const from = { items: receiver.items.length, lines: logs.lines.length };
      const over = await app.request(`/_action/${actionIdOf(PROBE, "echo")}`, {
        method: "POST",
        body: encodeCall(Array(1_000).fill(0)),
        headers: { Origin: ORIGIN },
      });
      assert.equal(over.status, 400);
      await over.body?.cancel();
      const [warning] = logs.lines.slice(from.lines);
      assert.equal(warning.level, "warn");
      assert.equal(warning.cap, "arguments");
      assert.ok(!("digest" in warning));
      // A real failure afterwards is the first and only event Sentry gets.
      const failed = await app.request(`/_action/${actionIdOf(PROBE, "fail")}`, {
        method: "POST",
        body: encodeCall([]),
        headers: { Origin: ORIGIN },
      });
      const { digest } = await failed.json();
      await receiver.waitFor(eventWithDigest(digest));
      await flushed();
      const events = receiver.items.slice(from.items).filter(isErrorEvent);
      assert.deepEqual(events.map((e) => e.payload.tags.digest), [digest]);
      assert.equal(logs.lines.slice(from.lines).filter((line) => "digest" in line).length, 1);
    });

    await t.step("the tunnel forwards our envelopes, and only ours, up to a limit", async () => {
      const envelope = (dsn: string, payload = "{}") =>
        `${JSON.stringify({ dsn, sent_at: new Date().toISOString() })}\n` +
        `${JSON.stringify({ type: "event" })}\n${payload}\n`;
      const tunnel = async (body: string) => {
        const res = await app.request("/_sentry", { method: "POST", body });
        await res.body?.cancel();
        return res.status;
      };
      const from = receiver.items.length;
      const message = JSON.stringify({ message: "via the tunnel" });
      assert.equal(await tunnel(envelope(receiver.dsn, message)), 200);
      const item = await receiver.waitFor((i) => i.payload.message === "via the tunnel");
      assert.equal(item.path, "/api/1/envelope/");

      assert.equal(await tunnel(envelope("http://otherkey@evil.example.com/666")), 403);
      assert.equal(await tunnel("not an envelope"), 403);
      const huge = JSON.stringify({ message: "x".repeat(2 * 1024 * 1024) });
      assert.equal(await tunnel(envelope(receiver.dsn, huge)), 413);
      await flushed();
      const forwarded = receiver.items.slice(from).filter((i) => i.path === "/api/1/envelope/");
      assert.deepEqual(forwarded.map((i) => i.payload.message), ["via the tunnel"]);

      // The page's CSP lets the browser post to the tunnel, not to Sentry's host.
      const page = await app.request("/about");
      await page.body?.cancel();
      assert.doesNotMatch(page.headers.get("content-security-policy")!, /127\.0\.0\.1/);
    });
  },
});

Deno.test({
  name: "sentry (server): a failing background job: an event tagged with the job, not a rejection",
  ...SDK,
  async fn() {
    using logs = captureLogs();
    await using receiver = startSentryReceiver();
    const app = await appWith(sentryEnv(receiver.dsn));
    const res = await app.request("/enqueue-job", { method: "POST" });
    assert.equal(res.status, 202);
    const event = await receiver.waitFor((i) => isErrorEvent(i) && i.payload.tags?.job === "fails");
    const line = logs.lines.find((l) => l.job === "fails" && l.level === "error");
    assert.ok(line, "logged");
    assert.equal(event.payload.tags.digest, line.digest);
    assert.equal(event.payload.event_id, line.sentry_event_id);
    assert.equal(event.payload.exception.values[0].mechanism.type, "auto.queue.deno_kv");
  },
});

Deno.test({
  name: "sentry (server): a request past its deadline: its transaction is sent, with its event",
  ...SDK,
  async fn() {
    using logs = captureLogs();
    await using receiver = startSentryReceiver();
    const app = await appWith(sentryEnv(receiver.dsn, { REQUEST_TIMEOUT_MS: "200" }));
    const res = await app.request("/stuck");
    assert.equal(res.status, 500);
    const digest = digestOnPage(await res.text());
    const event = await receiver.waitFor(eventWithDigest(digest));
    // The handler still waits (for ever): the transaction ends with the answer all the same.
    const transaction = await receiver.waitFor(named("GET /stuck"));
    assert.equal(transaction.payload.contexts.trace.status, "internal_error");
    assert.equal(traceOfItem(transaction), traceOfItem(event));
    assert.equal(logs.lines.find((l) => l.digest === digest)?.error.name, "DeadlineExceeded");
  },
});

Deno.test({
  name:
    "sentry (server): tracePropagationTargets: a listed upstream gets the trace, an unlisted one not",
  ...SDK,
  async fn() {
    await using receiver = startSentryReceiver();
    await using listed = recordingUpstream();
    await using unlisted = recordingUpstream();
    const app = await appWith(sentryEnv(receiver.dsn, {
      SENTRY_TRACE_PROPAGATION_TARGETS: `https://api.example.com, ${listed.origin}`,
    }));
    // The unlisted one also as a URL that holds the listed origin (a webhook's URL a user typed):
    // a target that is a URL matches by origin, not anywhere in the URL as Sentry's strings do -
    // before, that call got the trace (and, on the launcher's path, the caller's baggage).
    upstreamUrls = [
      `${listed.origin}/data`,
      `${unlisted.origin}/data`,
      `${unlisted.origin}/hook?next=${listed.origin}/data`,
    ];
    assert.equal(await (await app.request("/upstreams")).text(), "[200,200,200]");

    const transaction = await receiver.waitFor(named("GET /upstreams"));
    const spanOf = (origin: string) =>
      clientSpans(transaction).find((span) => span.description === `GET ${origin}/data`);
    assert.ok(spanOf(unlisted.origin), "a span either way");
    assertCarriesTrace(listed.seen[0], transaction, spanOf(listed.origin)!);
    assert.deepEqual(traceHeadersIn(unlisted.seen[0]), []);
    assert.deepEqual(traceHeadersIn(unlisted.seen[1]), [], "the listed origin in its query");
  },
});

Deno.test({
  name: "sentry (server): an unsampled request's failure is still sent, with its trace id",
  ...SDK,
  async fn() {
    using logs = captureLogs();
    await using receiver = startSentryReceiver();
    const app = await appWith(sentryEnv(receiver.dsn, { SENTRY_TRACES_SAMPLE_RATE: "0" }));
    // Its page keeps the decision for the browser SDK, and carries no more than that: the flag,
    // and a DSC that says so.
    const html = await (await app.request("/island")).text();
    assert.match(html, /<meta name="sentry-trace" content="[0-9a-f]{32}-[0-9a-f]{16}-0"/);
    assert.match(html, /<meta name="baggage" content="[^"]*sentry-sampled=false/);
    assert.equal(html.match(/<meta name="(sentry-trace|baggage|traceparent)"/g)?.length, 2);
    const res = await app.request("/boom");
    const digest = digestOnPage(await res.text());
    const line = logs.lines.find((l) => l.digest === digest)!;
    const event = await receiver.waitFor(eventWithDigest(digest));
    assert.equal(traceOfItem(event), line.trace_id);
    await flushed();
    assert.deepEqual(receiver.items.map((i) => i.type), ["event"], "no transaction");
  },
});

Deno.test({
  name: "sentry (server): Spotlight gets the envelopes, with no DSN at all",
  ...SDK,
  async fn() {
    using _logs = captureLogs();
    await using sidecar = startSentryReceiver();
    const app = await appWith({
      SENTRY_SPOTLIGHT: `http://127.0.0.1:${sidecar.port}/stream`,
      SENTRY_TRACES_SAMPLE_RATE: "1",
    });
    const res = await app.request("/boom");
    const digest = digestOnPage(await res.text());
    const event = await sidecar.waitFor(eventWithDigest(digest));
    assert.equal(event.path, "/stream");
    // Pages with islands still hand their trace to the browser.
    const html = await (await app.request("/island")).text();
    const { payload } = await sidecar.waitFor(named("GET /island"));
    assert.match(
      html,
      new RegExp(`<meta name="sentry-trace" content="${payload.contexts.trace.trace_id}-`),
    );
  },
});

Deno.test({
  name: "sentry (server): off by default: no SDK on the page, nothing sent",
  ...SDK,
  async fn() {
    using _logs = captureLogs();
    await using receiver = startSentryReceiver();
    const settings = readSettings((name) => IN_MEMORY[name]);
    assert.equal(settings.sentry, undefined, "no DSN, no Sentry");
    const { app, telemetry } = await appFromEnv(MANIFEST, settings);
    assert.equal(telemetry, undefined);
    const res = await app.request("/blog/first-post");
    const html = await res.text();
    assert.equal(res.status, 200);
    // (Speculation rules are JSON for the browser, not a script.)
    assert.doesNotMatch(html, /sentry|baggage|<script(?! type="speculationrules")/i);
    const failed = await app.request("/boom");
    assert.equal(failed.status, 500);
    await failed.body?.cancel();
    assert.equal(receiver.envelopes(), 0);
  },
});

Deno.test("sentry settings from the environment", () => {
  const read = (env: Record<string, string>) => readSentryConfig((name) => env[name], false).config;
  const problems = (env: Record<string, string>) =>
    readSentryConfig((name) => env[name], false).problems;
  assert.equal(read({}), undefined, "off without a DSN");
  const dsn = "https://key@o1.ingest.example.io/42";
  const defaults = read({ SENTRY_DSN: dsn })!;
  assert.equal(defaults.environment, "production");
  assert.equal(defaults.tracesSampleRate, 0.1);
  assert.equal(
    readSentryConfig((name) => ({ SENTRY_DSN: dsn })[name], true).config!.tracesSampleRate,
    1,
  );
  assert.equal(defaults.tunnel, undefined);
  assert.deepEqual(browserConnectSources(defaults), ["https://o1.ingest.example.io"]);

  const set = read({
    SENTRY_DSN: dsn,
    SENTRY_ENVIRONMENT: "staging",
    SENTRY_RELEASE: "v1.2.3",
    SENTRY_TRACES_SAMPLE_RATE: "0.5",
    SENTRY_TUNNEL: "1",
    SENTRY_TRACE_PROPAGATION_TARGETS: "https://api.example.com, localhost",
  })!;
  assert.deepEqual(
    [set.environment, set.release, set.tracesSampleRate, set.tunnel],
    ["staging", "v1.2.3", 0.5, "/_sentry"],
  );
  // A URL matches by origin (and path), other text anywhere in the URL as Sentry has it.
  const [api, local] = set.tracePropagationTargets!;
  assert.equal(local, "localhost");
  assert.ok(api instanceof RegExp, String(api));
  for (const url of ["https://api.example.com", "https://API.example.com/v1?x=1"]) {
    assert.ok(api.test(url), url);
  }
  for (
    const url of [
      "https://elsewhere.example/?next=https://api.example.com/",
      "https://api.example.com.elsewhere.example/",
      "https://api.example.com@elsewhere.example/",
      "https://api.example.com:8443/",
      "http://api.example.com/",
    ]
  ) assert.ok(!api.test(url), url);
  assert.deepEqual(browserConnectSources(set), [], "the tunnel is same-origin");
  // A setting that makes no sense is a problem the start reports, never a silent default.
  assert.match(
    problems({ SENTRY_DSN: dsn, SENTRY_TRACES_SAMPLE_RATE: "2" })[0],
    /^SENTRY_TRACES_SAMPLE_RATE=2: /,
  );
  assert.match(problems({ SENTRY_DSN: "not a dsn" })[0], /^SENTRY_DSN=not a dsn: /);
  assert.equal(problems({ SENTRY_DSN: "https://o1.ingest.example.io/42" }).length, 1, "no key");
  assert.equal(problems({ SENTRY_DSN: dsn, SENTRY_TUNNEL: "maybe" }).length, 1);

  const spotlight = read({ SENTRY_SPOTLIGHT: "1" })!;
  assert.equal(spotlight.spotlight, "http://localhost:8969/stream");
  assert.equal(spotlight.dsn, undefined);
  assert.deepEqual(browserConnectSources(spotlight), ["http://localhost:8969"]);
});
