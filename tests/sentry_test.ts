/**
 * Sentry on the server, against a receiver on 127.0.0.1 that reads what the real `@sentry/deno`
 * sends: failures with their digest, route-named transactions, continued traces, tracing headers on
 * outgoing fetches (as `tracePropagationTargets` allows, never to Sentry's own host), silence for
 * not-found, a flush on SIGTERM that waits for Sentry only so long, the tunnel, Spotlight, and pages
 * that an absent, slow, failing or rate-limiting Sentry never slows: their median latency stays
 * within 1.5 × the one with a healthy Sentry, measured side by side.
 */
import assert from "node:assert/strict";
import { browserConnectSources, readSentryConfig } from "../lib/sentry/config.ts";
import { copyProject, type ProjectCopy } from "./helpers/project_copy.ts";
import {
  isErrorEvent,
  isTransaction,
  type ReceivedItem,
  startSentryReceiver,
} from "./helpers/sentry_receiver.ts";
import { freePort, startServer, type TestServer } from "./helpers/server.ts";

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const PARENT_SPAN = "b7ad6b7169203331";

/**
 * The project plus routes that fail (before and after the shell, `/late?ms=` that long after it),
 * ones that call upstreams (`UPSTREAM_URL`, each of `UPSTREAM_URLS` in turn), and a `_404` that
 * can throw.
 */
async function sentryProject(): Promise<ProjectCopy> {
  const project = await copyProject();
  await project.write(
    "routes/boom.tsx",
    `export default function Boom() { throw new Error("secret boom"); }\n`,
  );
  await project.write(
    "routes/late.tsx",
    `import { Suspense, use } from "react";
import type { PageProps } from "../lib/mod.ts";
function Late({ failing }: { failing: Promise<string> }) { return <p>{use(failing)}</p>; }
export default function Page({ url }: PageProps) {
  const ms = Number(url.searchParams.get("ms") ?? 50);
  const failing = new Promise<string>((_, reject) => setTimeout(() => reject(new Error("late boom")), ms));
  return <Suspense fallback={<p>loading</p>}><Late failing={failing} /></Suspense>;
}\n`,
  );
  await project.write(
    "routes/throw-value.ts",
    `export const handler = { GET() { throw { reason: "not an Error" }; } };\n`,
  );
  await project.write(
    "routes/unhandled.ts",
    `export const handler = {
  GET() { Promise.reject(new Error("nobody awaited this")); return new Response("answered"); },
};\n`,
  );
  await project.write(
    "routes/upstream.ts",
    `export const handler = {
  async GET() {
    const res = await fetch(Deno.env.get("UPSTREAM_URL")!);
    return new Response(await res.text());
  },
};\n`,
  );
  await project.write(
    "routes/upstreams.ts",
    `export const handler = {
  async GET() {
    const statuses = [];
    for (const url of Deno.env.get("UPSTREAM_URLS")!.split(",")) {
      const res = await fetch(url);
      await res.body?.cancel();
      statuses.push(res.status);
    }
    return Response.json(statuses);
  },
};\n`,
  );
  await project.write(
    "routes/gone-later.tsx",
    `import { Suspense, use } from "react";
import { notFound } from "../lib/mod.ts";
function Gone({ post }: { post: Promise<string> }) { return <p>{use(post)}</p>; }
export default function Page() {
  const post = new Promise<string>((_, reject) => setTimeout(() => reject(notFound()), 50));
  return <Suspense fallback={<p>loading</p>}><Gone post={post} /></Suspense>;
}\n`,
  );
  // Static routes beside the example's [slug] and [...path]: the one answering names the transaction.
  await project.write("routes/blog/new.tsx", `export default () => <h1>New post</h1>;\n`);
  await project.write("routes/docs/index.tsx", `export default () => <h1>Docs</h1>;\n`);
  await project.write(
    "routes/_404.tsx",
    `import type { PageProps } from "../lib/mod.ts";
export default function NotFound({ url }: PageProps) {
  if (url.pathname === "/broken-404") throw new Error("the 404 page broke");
  return <h1>Page not found</h1>;
}\n`,
  );
  return project;
}

function sentryEnv(dsn: string, more: Record<string, string> = {}): Record<string, string> {
  return { SENTRY_DSN: dsn, SENTRY_TRACES_SAMPLE_RATE: "1", ...more };
}

function digestOnPage(html: string): string {
  const match = html.match(/Digest: (?:<code>|\\u003ccode>)?([0-9A-Z-]+)/);
  assert.ok(match, `no digest on the page:\n${html}`);
  return match[1];
}

const traceOfItem = (item: ReceivedItem): string => item.payload.contexts.trace.trace_id;
const named = (name: string) => (item: ReceivedItem) =>
  isTransaction(item) && item.payload.transaction === name;

interface ClientSpan {
  op: string;
  description: string;
  span_id: string;
  data: Record<string, unknown>;
}

/** A transaction's `http.client` spans: one per outgoing fetch. */
const clientSpans = (transaction: ReceivedItem): ClientSpan[] =>
  transaction.payload.spans.filter((span: ClientSpan) => span.op === "http.client");

/** A local upstream that records the headers of every request it gets. */
function recordingUpstream() {
  const seen: Headers[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    seen.push(req.headers);
    return new Response("ok");
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    seen,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

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

Deno.test("sentry (server)", async (t) => {
  await using project = await sentryProject();
  const ROOT = { root: project.root };
  await t.step("off by default: no SDK on the page, nothing sent", async () => {
    await using receiver = startSentryReceiver();
    await using server = await startServer({}, ROOT);
    const res = await server.fetch("/blog/hello-world");
    const html = await res.text();
    assert.equal(res.status, 200);
    assert.doesNotMatch(html, /sentry|baggage|<script/i);
    const failed = await server.fetch("/boom");
    assert.equal(failed.status, 500);
    await failed.body?.cancel();
    await server.stop();
    assert.equal(receiver.envelopes(), 0);
  });

  await t.step(
    "a failure: one event, tagged with the digest of the page and the log",
    async () => {
      await using receiver = startSentryReceiver();
      await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
      const res = await server.fetch("/boom");
      assert.equal(res.status, 500);
      const digest = digestOnPage(await res.text());
      const line = await server.waitForLog((l) => l.digest === digest);

      const event = await receiver.waitFor(isErrorEvent);
      assert.equal(event.payload.tags.digest, digest);
      assert.equal(event.payload.tags.route, "/boom");
      assert.equal(event.payload.tags.method, "GET");
      assert.equal(event.payload.tags.request_id, line.request_id);
      assert.equal(event.payload.exception.values[0].value, "secret boom");
      assert.equal(line.sentry_event_id, event.payload.event_id);
      assert.equal(line.trace_id, event.payload.contexts.trace.trace_id);

      const transaction = await receiver.waitFor(named("GET /boom"));
      assert.equal(transaction.payload.contexts.trace.trace_id, line.trace_id);
      assert.equal(transaction.payload.contexts.trace.status, "internal_error");
      await server.stop();
      assert.equal(receiver.items.filter(isErrorEvent).length, 1, "captured once");
    },
  );

  await t.step(
    "a transaction named by the route pattern, continuing the caller's trace",
    async () => {
      await using receiver = startSentryReceiver();
      await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
      const res = await server.fetch("/blog/hello-world", {
        headers: {
          "sentry-trace": `${TRACE_ID}-${PARENT_SPAN}-1`,
          baggage: `sentry-trace_id=${TRACE_ID},sentry-sampled=true,sentry-sample_rate=1`,
        },
      });
      const html = await res.text();
      assert.equal(res.status, 200);
      const { payload } = await receiver.waitFor(named("GET /blog/:slug"));
      assert.equal(payload.contexts.trace.op, "http.server");
      assert.equal(payload.contexts.trace.trace_id, TRACE_ID);
      assert.equal(payload.contexts.trace.parent_span_id, PARENT_SPAN);
      assert.equal(payload.contexts.trace.data["http.response.status_code"], 200);
      // The page hands the same trace to the browser SDK.
      assert.match(
        html,
        new RegExp(`<meta name="sentry-trace" content="${TRACE_ID}-[0-9a-f]{16}-1"`),
      );
      assert.match(html, /<meta name="baggage" content="[^"]*sentry-trace_id=/);
    },
  );

  await t.step(
    "overlapping routes: the transaction is named by the route that answered",
    async () => {
      await using receiver = startSentryReceiver();
      await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
      const names: Record<string, string> = {
        "/blog/new": "GET /blog/new",
        "/blog/islands": "GET /blog/:slug",
        "/docs": "GET /docs",
        "/docs/getting/started": "GET /docs/:path+",
      };
      for (const [path, name] of Object.entries(names)) {
        const res = await server.fetch(path);
        assert.equal(res.status, 200, path);
        await res.body?.cancel();
        const { payload } = await receiver.waitFor(named(name));
        assert.equal(payload.request.url, server.origin + path);
        assert.equal(payload.transaction_info.source, "route");
      }
    },
  );

  await t.step("an unsampled request's failure is still sent, with its trace id", async () => {
    await using receiver = startSentryReceiver();
    const env = sentryEnv(receiver.dsn, { SENTRY_TRACES_SAMPLE_RATE: "0" });
    await using server = await startServer(env, ROOT);
    const res = await server.fetch("/boom");
    const digest = digestOnPage(await res.text());
    const line = await server.waitForLog((l) => l.digest === digest);
    const event = await receiver.waitFor(isErrorEvent);
    assert.equal(event.payload.tags.digest, digest);
    assert.equal(traceOfItem(event), line.trace_id);
    await server.stop();
    assert.deepEqual(receiver.items.map((i) => i.type), ["event"], "no transaction");
  });

  await t.step(
    "an unhandled rejection: captured with its digest, the server lives on",
    async () => {
      await using receiver = startSentryReceiver();
      await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
      assert.equal(await (await server.fetch("/unhandled")).text(), "answered");
      const event = await receiver.waitFor(isErrorEvent);
      const line = await server.waitForLog((l) => String(l.msg).startsWith("Unhandled rejection"));
      assert.equal(event.payload.tags.digest, line.digest);
      assert.equal(event.payload.event_id, line.sentry_event_id);
      assert.equal((await server.fetch("/about")).status, 200);
    },
  );

  await t.step("a thrown non-Error: captured once, its transaction ends as a 500", async () => {
    await using receiver = startSentryReceiver();
    await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
    const res = await server.fetch("/throw-value");
    assert.equal(res.status, 500);
    const digest = digestOnPage(await res.text());
    const event = await receiver.waitFor(isErrorEvent);
    assert.equal(event.payload.tags.digest, digest);
    const transaction = await receiver.waitFor(named("GET /throw-value"));
    assert.equal(transaction.payload.contexts.trace.status, "internal_error");
    assert.equal(traceOfItem(transaction), traceOfItem(event));
    await server.stop();
    assert.equal(receiver.items.filter(isErrorEvent).length, 1, "captured once");
  });

  await t.step(
    "a failure after the shell: captured once, inside the page's transaction",
    async () => {
      await using receiver = startSentryReceiver();
      await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
      const res = await server.fetch("/late");
      assert.equal(res.status, 200);
      const digest = digestOnPage(await res.text());
      const event = await receiver.waitFor(isErrorEvent);
      assert.equal(event.payload.tags.digest, digest);
      assert.equal(event.payload.tags.route, "/late");
      const transaction = await receiver.waitFor(named("GET /late"));
      assert.equal(traceOfItem(event), traceOfItem(transaction));
      assert.equal(
        event.payload.contexts.trace.span_id,
        transaction.payload.contexts.trace.span_id,
      );
      await server.stop();
      assert.equal(receiver.items.filter(isErrorEvent).length, 1, "captured once");
    },
  );

  await t.step("a W3C traceparent is continued too", async () => {
    await using receiver = startSentryReceiver();
    await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
    const res = await server.fetch("/api/time", {
      headers: { traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-01` },
    });
    await res.body?.cancel();
    const { payload } = await receiver.waitFor(named("GET /api/time"));
    assert.equal(payload.contexts.trace.trace_id, TRACE_ID);
    assert.equal(payload.contexts.trace.parent_span_id, PARENT_SPAN);
  });

  await t.step("an outgoing fetch: an http.client span and the trace's headers", async () => {
    await using receiver = startSentryReceiver();
    await using upstream = recordingUpstream();
    const env = sentryEnv(receiver.dsn, { UPSTREAM_URL: `${upstream.origin}/data` });
    await using server = await startServer(env, ROOT);
    const res = await server.fetch("/upstream");
    await res.text();

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
      await using receiver = startSentryReceiver();
      await using upstream = recordingUpstream();
      // One transaction fetches a harmless path on the ingest host, then the upstream.
      const ingest = `http://127.0.0.1:${receiver.port}/harmless`;
      const env = sentryEnv(receiver.dsn, { UPSTREAM_URLS: `${ingest},${upstream.origin}/data` });
      await using server = await startServer(env, ROOT);
      assert.equal(await (await server.fetch("/upstreams")).text(), "[200,200]");

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
    await using receiver = startSentryReceiver();
    await using upstream = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      async (req) => {
        await new Promise((resolve) => setTimeout(resolve, 50)); // overlap the requests
        return new Response(req.headers.get("sentry-trace"));
      },
    );
    const env = sentryEnv(receiver.dsn, {
      UPSTREAM_URL: `http://127.0.0.1:${upstream.addr.port}/data`,
    });
    await using server = await startServer(env, ROOT);
    const traceIds = Array.from({ length: 6 }, (_, i) => TRACE_ID.slice(0, -1) + i);
    const forwarded = await Promise.all(traceIds.map(async (traceId) => {
      const res = await server.fetch("/upstream", {
        headers: { "sentry-trace": `${traceId}-${PARENT_SPAN}-1` },
      });
      return (await res.text()).split("-")[0];
    }));
    assert.deepEqual(forwarded, traceIds);
  });

  await t.step(
    "tracePropagationTargets: a listed upstream gets the trace's headers, an unlisted one none",
    async () => {
      await using receiver = startSentryReceiver();
      await using listed = recordingUpstream();
      await using unlisted = recordingUpstream();
      const env = sentryEnv(receiver.dsn, {
        UPSTREAM_URLS: `${listed.origin}/data,${unlisted.origin}/data`,
        SENTRY_TRACE_PROPAGATION_TARGETS: `https://api.example.com, ${listed.origin}`,
      });
      await using server = await startServer(env, ROOT);
      assert.equal(await (await server.fetch("/upstreams")).text(), "[200,200]");

      const transaction = await receiver.waitFor(named("GET /upstreams"));
      const spanOf = (origin: string) =>
        clientSpans(transaction).find((span) => span.description === `GET ${origin}/data`);
      assert.ok(spanOf(unlisted.origin), "a span either way");
      assertCarriesTrace(listed.seen[0], transaction, spanOf(listed.origin)!);
      assert.deepEqual(traceHeadersIn(unlisted.seen[0]), []);
    },
  );

  await t.step(
    "not-found sends nothing: unknown URL, notFound() before and after the shell, a throwing _404",
    async () => {
      await using receiver = startSentryReceiver();
      await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
      for (const path of ["/no/such/page", "/blog/unknown-post"]) {
        const res = await server.fetch(path);
        assert.equal(res.status, 404);
        assert.doesNotMatch(await res.text(), /sentry-trace|baggage|_app\/sentry/);
      }
      // After the shell the status is sent; the page is marked noindex instead.
      const late = await server.fetch("/gone-later");
      assert.equal(late.status, 200);
      assert.match(await late.text(), /noindex/);
      const broken = await server.fetch("/broken-404");
      assert.equal(broken.status, 500);
      const digest = digestOnPage(await broken.text());
      const line = await server.waitForLog((l) => l.digest === digest);
      assert.equal(line.sentry_event_id, null);
      // A request that is reported, after those: once it arrives, the earlier ones had their turn.
      await (await server.fetch("/api/time")).body?.cancel();
      await receiver.waitFor(named("GET /api/time"));
      await server.stop(); // flushes whatever is pending
      assert.deepEqual(
        receiver.items.map((i) => `${i.type} ${i.payload.transaction ?? ""}`),
        ["transaction GET /api/time"],
      );
    },
  );

  await t.step(
    "SIGTERM flushes an event captured while shutting down, waiting for a slow Sentry",
    async () => {
      await using receiver = startSentryReceiver({ delayMs: 1_000 });
      await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
      // The shell is out: the request is in flight, and its boundary fails 300 ms after SIGTERM.
      const res = await server.fetch("/late?ms=300");
      const stopped = timedStop(server);
      const digest = digestOnPage(await res.text());
      const { code, ms } = await stopped;
      assert.equal(code, 0, "a clean exit");
      const event = receiver.items.find(isErrorEvent);
      assert.equal(event?.payload.tags.digest, digest, "the event arrived before the exit");
      assert.ok(ms >= 1_000, "the exit waited for Sentry's answer");
      assert.ok(ms < EXIT_BOUND_MS, `the exit took ${Math.round(ms)} ms`);
    },
  );

  await t.step(
    "SIGTERM with a Sentry that never answers: the exit still comes in time",
    async () => {
      await using receiver = startSentryReceiver({ delayMs: Infinity });
      await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
      await (await server.fetch("/boom")).text();
      await receiver.waitFor(isErrorEvent); // sent, and never answered
      const { code, ms } = await timedStop(server);
      assert.equal(code, 0, "a clean exit");
      assert.ok(ms < EXIT_BOUND_MS, `the exit took ${Math.round(ms)} ms`);
    },
  );

  await t.step(
    "a Sentry down, slow (5 s), failing (500) or rate-limiting (429): pages as fast as with a healthy one",
    async () => {
      await using healthy = startSentryReceiver();
      await using slow = startSentryReceiver({ delayMs: 5_000 });
      await using failing = startSentryReceiver({ status: 500 });
      await using limiting = startSentryReceiver({ status: 429, headers: RATE_LIMITED });
      const dsns = {
        healthy: healthy.dsn,
        down: `http://publickey@127.0.0.1:${freePort()}/1`, // nothing listens there
        "slow (5 s)": slow.dsn,
        "failing (500)": failing.dsn,
        "rate-limiting (429)": limiting.dsn,
      };
      await using servers = new AsyncDisposableStack();
      const [baseline, ...faulty] = await Promise.all(
        Object.entries(dsns).map(async ([name, dsn]) => ({
          name,
          server: servers.use(await startServer(sentryEnv(dsn), ROOT)),
          page: [] as number[],
          failure: [] as number[],
        })),
      );
      const apps = [baseline, ...faulty];
      const measuring = AbortSignal.timeout(MEASURING_BOUND_MS);
      for (let round = 0; round < WARM_UP + ROUNDS; round++) {
        for (const app of roundOrder(apps, round)) {
          const page = await timedGet(app.server, "/blog/hello-world", 200, measuring);
          // A failure too: an error event on top of the transaction.
          const failure = await timedGet(app.server, "/boom", 500, measuring);
          if (round < WARM_UP) continue;
          app.page.push(page);
          app.failure.push(failure);
        }
      }

      const slower = faulty.flatMap((app) =>
        (["page", "failure"] as const).flatMap((kind) => {
          const ratio = median(app[kind]) / median(baseline[kind]);
          return ratio <= MAX_SLOWDOWN ? [] : [`${app.name}, ${kind}: ${ratio.toFixed(2)} ×`];
        })
      );
      assert.deepEqual(slower, [], "median latency against a healthy Sentry's");
      const exits = await Promise.all(apps.map((app) => app.server.stop()));
      assert.deepEqual(exits, [0, 0, 0, 0, 0], "every server lived to exit cleanly");
      for (const receiver of [slow, failing, limiting]) {
        assert.ok(receiver.envelopes() > 0, "the SDK did try");
      }
      assert.ok(limiting.envelopes() < healthy.envelopes(), "the SDK obeyed the rate limit");
    },
  );

  await t.step("the tunnel forwards our envelopes, and only ours, up to a limit", async () => {
    await using receiver = startSentryReceiver();
    await using server = await startServer(
      sentryEnv(receiver.dsn, { SENTRY_TUNNEL: "1" }),
      ROOT,
    );
    const envelope = (dsn: string, payload = "{}") =>
      `${JSON.stringify({ dsn, sent_at: new Date().toISOString() })}\n` +
      `${JSON.stringify({ type: "event" })}\n${payload}\n`;

    const ok = await server.fetch("/_sentry", {
      method: "POST",
      body: envelope(receiver.dsn, JSON.stringify({ message: "via the tunnel" })),
    });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    const item = await receiver.waitFor((i) => i.payload.message === "via the tunnel");
    assert.equal(item.path, "/api/1/envelope/");

    const other = await server.fetch("/_sentry", {
      method: "POST",
      body: envelope("http://otherkey@evil.example.com/666"),
    });
    assert.equal(other.status, 403);
    await other.body?.cancel();
    const garbage = await server.fetch("/_sentry", { method: "POST", body: "not an envelope" });
    assert.equal(garbage.status, 403);
    await garbage.body?.cancel();
    const huge = await server.fetch("/_sentry", {
      method: "POST",
      body: envelope(receiver.dsn, JSON.stringify({ message: "x".repeat(2 * 1024 * 1024) })),
    });
    assert.equal(huge.status, 413);
    await huge.body?.cancel();
    assert.equal(receiver.items.filter((i) => i.type === "event").length, 1);

    // The page's CSP lets the browser post to the tunnel, not to Sentry's host.
    const page = await server.fetch("/");
    await page.body?.cancel();
    assert.doesNotMatch(page.headers.get("content-security-policy")!, /127\.0\.0\.1/);
  });

  await t.step("Spotlight: envelopes go to the sidecar, with no DSN at all", async () => {
    await using sidecar = startSentryReceiver();
    const spotlight = `http://127.0.0.1:${sidecar.port}/stream`;
    await using server = await startServer(
      { SENTRY_SPOTLIGHT: spotlight, SENTRY_TRACES_SAMPLE_RATE: "1" },
      ROOT,
    );
    const res = await server.fetch("/boom");
    const digest = digestOnPage(await res.text());
    const event = await sidecar.waitFor(isErrorEvent);
    assert.equal(event.path, "/stream");
    assert.equal(event.payload.tags.digest, digest);
    // Pages still hand their trace to the browser.
    const html = await (await server.fetch("/blog/hello-world")).text();
    const { payload } = await sidecar.waitFor(named("GET /blog/:slug"));
    assert.match(
      html,
      new RegExp(`<meta name="sentry-trace" content="${payload.contexts.trace.trace_id}-`),
    );
  });
});

/** Sentry's flush on SIGTERM waits up to 2 s (lib/cli/start.ts); the exit comes soon after. */
const EXIT_BOUND_MS = 3_000;

/** SIGTERM, then the exit code and how long the exit took; killed if it overstays by far. */
async function timedStop(server: TestServer): Promise<{ code: number; ms: number }> {
  const started = performance.now();
  const killer = setTimeout(() => server.kill(), 2 * EXIT_BOUND_MS);
  const code = await server.stop();
  clearTimeout(killer);
  return { code, ms: performance.now() - started };
}

/** Timed requests per route and server, after some to warm up. */
const ROUNDS = 60;
const WARM_UP = 5;
/** The most a struggling Sentry may slow a page's median latency, as a multiple of a healthy one's. */
const MAX_SLOWDOWN = 1.5;
/** Measuring takes a few seconds; a server that waits on a struggling Sentry fails it by then. */
const MEASURING_BOUND_MS = 30_000;
const RATE_LIMITED = { "Retry-After": "60", "X-Sentry-Rate-Limits": "60::organization" };

/** Milliseconds until `path` answered with `status`, body and all. */
async function timedGet(
  server: TestServer,
  path: string,
  status: number,
  signal: AbortSignal,
): Promise<number> {
  const started = performance.now();
  const [got, body] = await server.fetch(path, { signal })
    .then(async (res) => [res.status, await res.text()] as const)
    .catch((error) => {
      if (!signal.aborted) throw error;
      throw new Error(`${server.origin}${path}: still no answer when measuring ran out of time`);
    });
  const ms = performance.now() - started;
  assert.equal(got, status, `${path}: ${body}`);
  return ms;
}

/**
 * Round `round`'s order of the servers: a rotation and a stride that change from round to round
 * (`items.length` is prime, so each stride visits all), so that each server follows each other
 * equally often. What one server's traffic leaves behind — its receiver, in this process, reading
 * its envelopes — then weighs on every other server alike.
 */
function roundOrder<T>(items: T[], round: number): T[] {
  const stride = 1 + (round % (items.length - 1));
  return items.map((_, k) => items[(round + k * stride) % items.length]);
}

function median(values: number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

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
  assert.deepEqual(set.tracePropagationTargets, ["https://api.example.com", "localhost"]);
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
