/**
 * Sentry on the server, against a receiver on 127.0.0.1 that reads what the real `@sentry/deno`
 * sends: failures with their digest, route-named transactions, continued traces, tracing headers on
 * outgoing fetches, silence for not-found, the tunnel, Spotlight, and an app that a slow, failing
 * or absent Sentry never hurts.
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
 * The project plus routes that fail (before and after the shell), one that calls an upstream, and
 * a `_404` that can throw.
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
function Late({ failing }: { failing: Promise<string> }) { return <p>{use(failing)}</p>; }
export default function Page() {
  const failing = new Promise<string>((_, reject) => setTimeout(() => reject(new Error("late boom")), 50));
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
    const seen: Headers[] = [];
    await using upstream = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) => {
        seen.push(req.headers);
        return new Response(req.headers.get("sentry-trace"));
      },
    );
    const env = sentryEnv(receiver.dsn, {
      UPSTREAM_URL: `http://127.0.0.1:${upstream.addr.port}/data`,
    });
    await using server = await startServer(env, ROOT);
    const res = await server.fetch("/upstream");
    await res.text();

    const { payload } = await receiver.waitFor(named("GET /upstream"));
    const traceId = payload.contexts.trace.trace_id;
    const client = payload.spans.find((s: { op: string }) => s.op === "http.client");
    assert.ok(client, "an http.client span");
    assert.equal(client.description, `GET http://127.0.0.1:${upstream.addr.port}/data`);
    assert.equal(client.data["http.response.status_code"], 200);

    const [headers] = seen;
    assert.equal(headers.get("sentry-trace"), `${traceId}-${client.span_id}-1`);
    assert.equal(headers.get("traceparent"), `00-${traceId}-${client.span_id}-01`);
    assert.match(headers.get("baggage")!, new RegExp(`sentry-trace_id=${traceId}`));
    // The SDK's own posts to the ingest host make no spans.
    assert.deepEqual(
      payload.spans.filter((s: { op: string }) => s.op === "http.client").length,
      1,
    );
  });

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

  await t.step("tracePropagationTargets: no headers to an upstream not listed", async () => {
    await using receiver = startSentryReceiver();
    const seen: Headers[] = [];
    await using upstream = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) => {
        seen.push(req.headers);
        return new Response("ok");
      },
    );
    const env = sentryEnv(receiver.dsn, {
      UPSTREAM_URL: `http://127.0.0.1:${upstream.addr.port}/data`,
      SENTRY_TRACE_PROPAGATION_TARGETS: "https://api.example.com",
    });
    await using server = await startServer(env, ROOT);
    await (await server.fetch("/upstream")).text();
    const { payload } = await receiver.waitFor(named("GET /upstream"));
    assert.ok(payload.spans.some((s: { op: string }) => s.op === "http.client"));
    assert.equal(seen[0].get("sentry-trace"), null);
    assert.equal(seen[0].get("baggage"), null);
    assert.equal(seen[0].get("traceparent"), null);
  });

  await t.step(
    "not-found sends nothing: unknown URL, notFound(), a throwing _404",
    async () => {
      await using receiver = startSentryReceiver();
      await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
      for (const path of ["/no/such/page", "/blog/unknown-post"]) {
        const res = await server.fetch(path);
        assert.equal(res.status, 404);
        assert.doesNotMatch(await res.text(), /sentry-trace|baggage|_app\/sentry/);
      }
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

  await t.step("SIGTERM flushes a pending event before the exit", async () => {
    await using receiver = startSentryReceiver();
    const server = await startServer(sentryEnv(receiver.dsn), ROOT);
    await (await server.fetch("/boom")).text();
    assert.equal(await server.stop(), 0);
    assert.ok(receiver.items.some(isErrorEvent));
  });

  for (
    const [what, receiverOptions] of [
      ["slow (5 s)", { delayMs: 5_000 }],
      ["failing (500)", { status: 500 }],
      ["rate-limiting (429)", { status: 429 }],
    ] as const
  ) {
    await t.step(`a ${what} Sentry never slows or breaks a page`, async () => {
      await using receiver = startSentryReceiver(receiverOptions);
      await using server = await startServer(sentryEnv(receiver.dsn), ROOT);
      await assertUnaffected(server, 5_000);
      assert.ok(receiver.envelopes() > 0, "the SDK did try");
    });
  }

  await t.step("an unreachable Sentry never slows or breaks a page", async () => {
    const dsn = `http://publickey@127.0.0.1:${freePort()}/1`;
    await using server = await startServer(sentryEnv(dsn), ROOT);
    await assertUnaffected(server, 5_000);
  });

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

/** Pages answer at once and in full while Sentry struggles: well within the receiver's delay. */
async function assertUnaffected(server: TestServer, sentryDelayMs: number): Promise<void> {
  const started = performance.now();
  const failed = await server.fetch("/boom");
  assert.equal(failed.status, 500);
  digestOnPage(await failed.text());
  for (let i = 0; i < 5; i++) {
    const res = await server.fetch("/blog/hello-world");
    assert.equal(res.status, 200);
    assert.match(await res.text(), /Hello, world/);
  }
  const elapsed = performance.now() - started;
  // Six requests that each waited on Sentry would take six times its delay: allow half of one.
  assert.ok(elapsed < sentryDelayMs / 2, `pages took ${Math.round(elapsed)} ms`);
}

Deno.test("sentry settings from the environment", () => {
  const read = (env: Record<string, string>) => readSentryConfig((name) => env[name]);
  assert.equal(read({}), undefined, "off without a DSN");
  const dsn = "https://key@o1.ingest.example.io/42";
  const defaults = read({ SENTRY_DSN: dsn })!;
  assert.equal(defaults.environment, "production");
  assert.equal(defaults.tracesSampleRate, Deno.env.get("NODE_ENV") === "development" ? 1 : 0.1);
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
  assert.equal(read({ SENTRY_DSN: dsn, SENTRY_TRACES_SAMPLE_RATE: "2" })!.tracesSampleRate, 0.1);

  assert.equal(read({ SENTRY_DSN: "not a dsn" }), undefined, "a broken DSN leaves it off");
  assert.equal(read({ SENTRY_DSN: "https://o1.ingest.example.io/42" }), undefined, "no key");

  const spotlight = read({ SENTRY_SPOTLIGHT: "1" })!;
  assert.equal(spotlight.spotlight, "http://localhost:8969/stream");
  assert.equal(spotlight.dsn, undefined);
  assert.deepEqual(browserConnectSources(spotlight), ["http://localhost:8969"]);
});
