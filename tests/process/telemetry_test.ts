/**
 * Deno's OpenTelemetry with the app, against an OTLP/HTTP receiver on 127.0.0.1 (JSON) and the real
 * `@sentry/deno` sending to a Sentry receiver: server spans named by route with `http.route`,
 * child spans for render, middleware and actions, the not-found page marked; a failure's error
 * event, JSON line and exported log record on the request's span; one `traceparent` with
 * `sentry-trace` and `baggage` on the same trace on outgoing fetches, fresh and continued; no
 * transaction from the SDK and no header to its ingest; the page's meta tags from the span.
 */
import assert from "node:assert/strict";
import { encodeCall } from "../../lib/shared/action_wire.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { actionIds } from "../helpers/fixtures.ts";
import {
  otlpEnv,
  type OtlpReceiver,
  type OtlpSpan,
  startOtlpReceiver,
  tracedEnv,
} from "../helpers/otlp_receiver.ts";
import { isErrorEvent, startSentryReceiver } from "shell/testing";
import { startServer } from "../helpers/server.ts";
import { recordingUpstream } from "../helpers/upstream.ts";

const SERVER = 2;
const CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";

/** The action probe, plus routes that fail, stream a failure or a `notFound()`, and fetch; built. */
async function telemetryProject(): Promise<string> {
  const probe = new URL("../helpers/probe_actions.ts", import.meta.url);
  return await builtCopy("telemetry", {
    // At the same depth as in the probe's own fixture: its import of lib/ resolves in the copy.
    "routes/_probe/actions.ts": await Deno.readTextFile(probe),
    "routes/boom.tsx": `export default function Boom() { throw new Error("boom in render"); }\n`,
    "routes/late.tsx": `import { Suspense, use } from "react";
function Late({ failing }: { failing: Promise<string> }) { return <p>{use(failing)}</p>; }
export default function Page() {
  const failing = new Promise<string>((_, reject) => setTimeout(() => reject(new Error("late boom")), 50));
  return <Suspense fallback={<p>loading</p>}><Late failing={failing} /></Suspense>;
}\n`,
    "routes/gone-later.tsx": `import { Suspense, use } from "react";
import { notFound } from "../lib/mod.ts";
function Gone({ post }: { post: Promise<string> }) { return <p>{use(post)}</p>; }
export default function Page() {
  const post = new Promise<string>((_, reject) => setTimeout(() => reject(notFound()), 50));
  return <Suspense fallback={<p>loading</p>}><Gone post={post} /></Suspense>;
}\n`,
    // Waits on an upstream that never answers: the request's deadline ends it.
    "routes/stuck/[id].tsx": `export const handler = {
  GET: () => new Promise<Response>(() => {}),
};
export default function Stuck() { return <p>never</p>; }\n`,
    // An event stream whose source fails after its first event.
    "routes/feed/broken.ts": `import { eventStream } from "../../lib/mod.ts";
export const handler = {
  GET: (req: Request, ctx: { params: unknown; url: URL }) =>
    eventStream(req, ctx, async function* () {
      yield { id: 1, data: "first" };
      throw new Error("the feed broke");
    }),
};\n`,
    // A call that sets its own baggage, to the first upstream.
    "routes/own_baggage.ts": `export const handler = {
  async GET() {
    const [url] = Deno.env.get("UPSTREAM_URLS")!.split(",");
    await (await fetch(url, { headers: { baggage: "tenant=b" } })).body?.cancel();
    return new Response("fetched");
  },
};\n`,
    "routes/upstreams.ts": `export const handler = {
  async GET() {
    for (const url of Deno.env.get("UPSTREAM_URLS")!.split(",")) await (await fetch(url)).body?.cancel();
    return new Response("fetched");
  },
};\n`,
  });
}

const serverSpan = (rx: OtlpReceiver, predicate: (span: OtlpSpan) => boolean) =>
  rx.span((span) => span.kind === SERVER && predicate(span));

/** The `sentry-*` entries of a `baggage` header. */
function dscOf(baggage: string | null): Record<string, string> {
  return Object.fromEntries(
    (baggage ?? "").split(",").map((member) => member.trim().split("="))
      .filter(([key]) => key.startsWith("sentry-"))
      .map(([key, value]) => [key.slice(7), decodeURIComponent(value)]),
  );
}

/** The three headers of an outgoing request, and that they agree on one trace. */
function assertOneTrace(headers: Headers): { traceId: string; dsc: Record<string, string> } {
  const traceparent = headers.get("traceparent") ?? "";
  // Two headers of a name reach the server as one, joined by a comma.
  assert.match(traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/, "exactly one traceparent");
  const [, traceId] = traceparent.split("-");
  assert.match(headers.get("sentry-trace") ?? "", new RegExp(`^${traceId}-[0-9a-f]{16}-[01]$`));
  const dsc = dscOf(headers.get("baggage"));
  assert.equal(dsc.trace_id, traceId, "the baggage's DSC is the trace's");
  assert.doesNotMatch(headers.get("baggage")!, /, /, "one baggage list");
  return { traceId, dsc };
}

const TRACE_HEADERS = ["traceparent", "sentry-trace", "baggage"];

Deno.test("telemetry: Deno's OpenTelemetry with Sentry on one trace", async (t) => {
  const root = await telemetryProject();
  await using rx = startOtlpReceiver();
  await using sentry = startSentryReceiver();
  await using listed = recordingUpstream();
  await using unlisted = recordingUpstream();
  await using server = await startServer({
    ...tracedEnv(rx, sentry.dsn),
    SENTRY_TRACE_PROPAGATION_TARGETS: listed.origin,
    UPSTREAM_URLS: `${listed.origin}/data,${unlisted.origin}/data`,
  }, { root });
  const ids = await actionIds(root);
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await server.fetch(path, { headers });
    return { res, html: await res.text() };
  };
  const byPath = (path: string) => (span: OtlpSpan) => span.attributes["url.path"] === path;

  await t.step("the server span is named by the route that answered, with http.route", async () => {
    const routes: Record<string, string> = {
      "/blog/first-post": "/blog/:slug",
      "/docs/getting/started": "/docs/:path+",
      "/about": "/about",
      "/api/time": "/api/time",
      "/": "/",
    };
    for (const [path, route] of Object.entries(routes)) {
      assert.equal((await get(path)).res.status, 200, path);
      const span = await serverSpan(rx, byPath(path));
      assert.equal(span.name, `GET ${route}`);
      assert.equal(span.attributes["http.route"], route);
      assert.equal(span.scope, "deno", "Deno's own span, renamed");
      assert.equal(span.attributes[`app.not_found`], undefined);
    }
  });

  await t.step("render and middleware are child spans of the server span", async () => {
    await get("/blog/second-post");
    const page = await serverSpan(rx, byPath("/blog/second-post"));
    const render = await rx.span((s) => s.name === "render" && s.traceId === page.traceId);
    assert.equal(render.parentSpanId, page.spanId);
    assert.equal(render.scope, "app");
    assert.ok(render.startMs >= page.startMs && render.endMs <= page.endMs + 1);

    assert.equal((await get("/admin")).res.status, 401); // hono/basic-auth answers
    const admin = await serverSpan(rx, byPath("/admin"));
    assert.equal(admin.name, "GET /admin");
    const guard = await rx.span((s) =>
      s.traceId === admin.traceId && s.name.startsWith("middleware")
    );
    assert.equal(guard.name, "middleware basicAuth");
    assert.equal(guard.parentSpanId, admin.spanId);
  });

  await t.step(
    "an action: POST /_action/:id, the action an attribute and a child span",
    async () => {
      const res = await server.fetch(`/_action/${ids.echo}`, {
        method: "POST",
        body: encodeCall([1]),
        headers: { Origin: server.origin, "Sec-Fetch-Site": "same-origin" },
      });
      assert.equal(res.status, 200);
      await res.body?.cancel();
      const span = await serverSpan(rx, byPath(`/_action/${ids.echo}`));
      assert.equal(span.name, "POST /_action/:id");
      assert.equal(span.attributes["http.route"], "/_action/:id");
      assert.equal(span.attributes["app.action"], "echo");
      const action = await rx.span((s) => s.traceId === span.traceId && s.name === "action echo");
      assert.equal(action.parentSpanId, span.spanId);
    },
  );

  await t.step(
    "the not-found page: its span marked app.not_found, before and after the shell",
    async () => {
      assert.equal((await get("/no/such/page")).res.status, 404);
      const unknown = await serverSpan(rx, byPath("/no/such/page"));
      assert.equal(unknown.attributes["app.not_found"], true);
      assert.equal(unknown.attributes["http.route"], undefined, "no route answered");

      assert.equal((await get("/blog/unknown-post")).res.status, 404); // notFound() in the handler
      const thrown = await serverSpan(rx, byPath("/blog/unknown-post"));
      assert.equal(thrown.name, "GET /blog/:slug");
      assert.equal(thrown.attributes["app.not_found"], true);

      // After the shell, the status (200) has gone out and Deno has ended the span.
      const late = await get("/gone-later");
      assert.match(late.html, /noindex/);
      const page = await serverSpan(rx, byPath("/gone-later"));
      const marked = await rx.span((s) =>
        s.traceId === page.traceId && s.name === "response.stream"
      );
      assert.equal(marked.parentSpanId, page.spanId);
      assert.equal(marked.attributes["app.not_found"], true);
    },
  );

  await t.step(
    "a failure: the event, the JSON line and its log record on the request's span",
    async () => {
      const { res } = await get("/boom");
      assert.equal(res.status, 500);
      const span = await serverSpan(rx, byPath("/boom"));
      const line = await server.waitForLog((l) => l.path === "/boom" && l.level === "error");
      const event = await sentry.waitFor((i) =>
        isErrorEvent(i) && i.payload.tags.route === "/boom"
      );
      assert.deepEqual([line.trace_id, line.span_id], [span.traceId, span.spanId]);
      assert.equal(event.payload.contexts.trace.trace_id, span.traceId);
      assert.equal(event.payload.contexts.trace.span_id, span.spanId);
      assert.equal((event.envelope.trace as Record<string, string>).trace_id, span.traceId);
      assert.equal(line.sentry_event_id, event.payload.event_id);
      assert.equal(event.payload.tags.digest, line.digest);
      assert.equal(span.attributes["app.digest"], line.digest);
      assert.equal(span.attributes["http.response.status_code"], "500");
      // The line was written in the request's context: exported with its span's ids.
      const record = await rx.log((l) => String(l.body).includes(`"digest":"${line.digest}"`));
      assert.deepEqual([record.traceId, record.spanId], [span.traceId, span.spanId]);
    },
  );

  await t.step("a failure after the shell: the same, though Deno's span has ended", async () => {
    const { res, html } = await get("/late");
    assert.equal(res.status, 200);
    assert.match(html, /Digest/);
    const span = await serverSpan(rx, byPath("/late"));
    const line = await server.waitForLog((l) => l.path === "/late" && l.level === "error");
    const event = await sentry.waitFor((i) => isErrorEvent(i) && i.payload.tags.route === "/late");
    assert.deepEqual([line.trace_id, line.span_id], [span.traceId, span.spanId]);
    assert.equal(event.payload.contexts.trace.span_id, span.spanId);
    assert.equal(event.payload.contexts.trace.trace_id, span.traceId);
    const record = await rx.log((l) => String(l.body).includes(`"digest":"${line.digest}"`));
    assert.deepEqual([record.traceId, record.spanId], [span.traceId, span.spanId]);
    const failed = await rx.span((s) => s.traceId === span.traceId && s.name === "response.stream");
    assert.equal(failed.attributes["app.digest"], line.digest);
    assert.equal(failed.status.code, 2, "status ERROR");
  });

  await t.step(
    "a failing event stream: its event and line on its request's span; a repeat's line names it",
    async () => {
      const lines = [];
      for (let i = 0; i < 2; i++) {
        const res = await server.fetch("/feed/broken");
        assert.match(
          await res.text(),
          /^retry: 1000\n\nevent: app-build\ndata: [^\n]+\n\nid: 1\ndata: first\n\n$/,
        );
        const id = res.headers.get("x-request-id");
        lines.push(await server.waitForLog((l) => l.request_id === id && l.level === "error"));
      }
      const [line, repeat] = lines;
      const span = await serverSpan(rx, (s) => s.traceId === line.trace_id);
      assert.equal(span.name, "GET /feed/broken");
      assert.equal(line.span_id, span.spanId);
      const event = await sentry.waitFor((i) =>
        isErrorEvent(i) && i.payload.tags.route === "/feed/broken"
      );
      assert.equal(event.payload.tags.digest, line.digest);
      assert.equal(event.payload.tags.request_id, line.request_id);
      assert.equal(event.payload.contexts.trace.trace_id, span.traceId);
      assert.equal(line.sentry_event_id, event.payload.event_id);
      const record = await rx.log((l) => String(l.body).includes(`"digest":"${line.digest}"`));
      assert.deepEqual([record.traceId, record.spanId], [span.traceId, span.spanId]);
      // The repeat: its own line and trace, no event (the last step counts what was sent).
      assert.equal(repeat.digest, line.digest);
      assert.equal(repeat.sentry_event_id, null);
      assert.equal(repeat.repeat_of, event.payload.event_id);
      assert.match(String(repeat.trace_id), /^[0-9a-f]{32}$/);
      assert.notEqual(repeat.trace_id, line.trace_id);
    },
  );

  await t.step("a failing action: its event and line on the action's request span", async () => {
    const res = await server.fetch(`/_action/${ids.fail}`, {
      method: "POST",
      body: encodeCall([]),
      headers: { Origin: server.origin, "Sec-Fetch-Site": "same-origin" },
    });
    assert.equal(res.status, 500);
    await res.body?.cancel();
    const span = await serverSpan(rx, byPath(`/_action/${ids.fail}`));
    const line = await server.waitForLog((l) => l.path === `/_action/${ids.fail}`);
    const event = await sentry.waitFor((i) =>
      isErrorEvent(i) && i.payload.tags.route === "action fail"
    );
    assert.deepEqual([line.trace_id, line.span_id], [span.traceId, span.spanId]);
    assert.equal(event.payload.contexts.trace.span_id, span.spanId);
  });

  await t.step(
    "outgoing fetch, a new trace: one traceparent, a new DSC on the same trace",
    async () => {
      await get("/upstreams");
      const span = await serverSpan(rx, byPath("/upstreams"));
      const { traceId, dsc } = assertOneTrace(listed.seen.at(-1)!);
      assert.equal(traceId, span.traceId);
      assert.equal(dsc.public_key, "publickey");
      assert.equal(dsc.environment, "production");
      assert.equal(dsc.sampled, "true");
      assert.match(dsc.sample_rand, /^0\.\d{6}$/);
      assert.equal(listed.seen.at(-1)!.get("sentry-trace"), `${traceId}-${span.spanId}-1`);
      // The client span Deno made for the fetch is the traceparent's parent.
      const [, , parent] = listed.seen.at(-1)!.get("traceparent")!.split("-");
      const client = await rx.span((s) => s.spanId === parent);
      assert.equal(client.parentSpanId, span.spanId);
      // Not a propagation target: Deno's traceparent, but none of Sentry's headers.
      const other = unlisted.seen.at(-1)!;
      assert.match(other.get("traceparent")!, new RegExp(`^00-${traceId}-`));
      assert.equal(other.get("sentry-trace"), null);
      assert.equal(other.get("baggage"), null);
    },
  );

  await t.step("outgoing fetch, a caller's traceparent and DSC: both carried on", async () => {
    const baggage =
      `sentry-trace_id=${CALLER_TRACE},sentry-public_key=callerkey,sentry-sample_rand=0.42,sentry-sampled=true,vendor=acme`;
    await get("/upstreams", { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, baggage });
    const span = await serverSpan(rx, (s) => s.traceId === CALLER_TRACE);
    assert.equal(span.parentSpanId, CALLER_SPAN);
    assert.equal(span.name, "GET /upstreams");
    const { traceId, dsc } = assertOneTrace(listed.seen.at(-1)!);
    assert.equal(traceId, CALLER_TRACE);
    assert.equal(dsc.public_key, "callerkey");
    assert.equal(dsc.sample_rand, "0.42");
    assert.match(listed.seen.at(-1)!.get("baggage")!, /vendor=acme/, "others' entries kept");
    assert.doesNotMatch(unlisted.seen.at(-1)!.get("baggage") ?? "", /sentry-/);
  });

  await t.step(
    "a caller's 200 baggage members: Deno writes 180, the trace's DSC among them",
    async () => {
      // Deno's propagator keeps the first 180 members: the DSC, written after the caller's entries,
      // was left out (review 14) and the upstream's Sentry SDK started a DSC of its own.
      const baggage = Array.from({ length: 200 }, (_, i) => `k${i}=1`).join(",");
      await get("/upstreams", { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, baggage });
      const sent = listed.seen.at(-1)!.get("baggage")!;
      assert.equal(sent.split(",").length, 180, "W3C's limit, as Deno keeps it");
      assert.equal(dscOf(sent).trace_id, CALLER_TRACE, `the trace's DSC: ${sent.slice(-120)}`);
      assert.match(sent, /(^|,)k0=1,/, "the caller's first entries go on");
    },
  );

  await t.step(
    "a call that sets its own baggage: one baggage header, its value of a key",
    async () => {
      // Before (review 14): Deno appended its own header, "tenant=b, tenant=a,...": a receiver takes
      // the last member of a key, the caller's.
      const baggage = `tenant=a,vendor=acme`;
      await get("/own_baggage", { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, baggage });
      const { dsc } = assertOneTrace(listed.seen.at(-1)!);
      assert.equal(dsc.trace_id, CALLER_TRACE);
      const members = listed.seen.at(-1)!.get("baggage")!.split(",");
      assert.deepEqual(members.filter((m) => m.startsWith("tenant=")), ["tenant=b"], `${members}`);
      assert.ok(members.includes("vendor=acme"), `${members}`);
    },
  );

  await t.step(
    "a caller's sentry-trace and baggage, no traceparent: continued as well",
    async () => {
      const trace = "1af7651916cd43dd8448eb211c80319c";
      await get("/upstreams", {
        "sentry-trace": `${trace}-${CALLER_SPAN}-1`,
        baggage: `sentry-trace_id=${trace},sentry-public_key=callerkey,sentry-sample_rand=0.25`,
      });
      const span = await serverSpan(rx, (s) => s.traceId === trace);
      assert.equal(span.parentSpanId, CALLER_SPAN);
      assert.equal(span.name, "GET /upstreams");
      assert.equal(span.scope, "app", "the span continuing the caller's trace is the app's");
      // Deno's own span stays alone in a trace of its own, linked to it.
      const deno = await serverSpan(rx, (s) => s.links.some((l) => l.spanId === span.spanId));
      assert.notEqual(deno.traceId, trace);
      assert.equal(span.links[0].spanId, deno.spanId);
      const { traceId, dsc } = assertOneTrace(listed.seen.at(-1)!);
      assert.equal(traceId, trace);
      assert.equal(dsc.public_key, "callerkey");
    },
  );

  await t.step(
    "the page's meta tags come from the server span, on a page with islands",
    async () => {
      // A page without islands runs no browser SDK: it carries neither tag nor the SDK's settings.
      const { html: plain } = await get("/blog/first-post?plain");
      assert.doesNotMatch(plain, /<meta name="(sentry-trace|baggage|app-sentry)"/);
      const { html } = await get("/counter?meta");
      const span = await serverSpan(rx, (s) => s.attributes["url.query"] === "meta");
      assert.match(
        html,
        new RegExp(`<meta name="sentry-trace" content="${span.traceId}-${span.spanId}-1"`),
      );
      const baggage = html.match(/<meta name="baggage" content="([^"]+)"/)![1].replaceAll(
        "&amp;",
        "&",
      );
      assert.equal(dscOf(baggage).trace_id, span.traceId);
    },
  );

  await t.step(
    "a caller's baggage past W3C's 8,192 bytes is no DSC: not in the page, not in an event",
    async () => {
      // Attack 9: a client's `sentry-*` entries of any size (up to what a request head takes)
      // were its trace's DSC: echoed whole into the page's meta tag and into the envelope of
      // every error event of its requests (40 KB each for a 20 KB entry).
      const trace = "2af7651916cd43dd8448eb211c80319c";
      const headers = {
        traceparent: `00-${trace}-${CALLER_SPAN}-01`,
        baggage: `sentry-trace_id=${trace},sentry-public_key=callerkey,sentry-junk=${
          "x".repeat(20_000)
        }`,
      };
      const { html } = await get("/counter?junk", headers);
      const meta = /<meta name="baggage" content="([^"]+)"/.exec(html)![1];
      assert.ok(meta.length < 1_000, `a meta tag of ${meta.length} characters`);
      assert.equal(dscOf(meta).trace_id, trace, "the trace goes on, with a DSC of its own");
      assert.equal(dscOf(meta).public_key, "publickey", "the DSN's");
      assert.equal((await get("/boom", headers)).res.status, 500);
      const event = await sentry.waitFor((i) =>
        isErrorEvent(i) && i.payload.contexts.trace.trace_id === trace
      );
      const dsc = event.envelope.trace as Record<string, string>;
      assert.equal(dsc.junk, undefined);
      assert.equal(dsc.trace_id, trace);
      assert.ok(JSON.stringify(event.envelope).length < 1_000, "the envelope's header");
    },
  );

  await t.step(
    "Sentry: no transaction, no span and no tracing header for its own posts",
    async () => {
      await get("/boom"); // one more event, sent after everything above
      await server.stop(); // flushes
      assert.deepEqual([...new Set(sentry.items.map((i) => i.type))], ["event"]);
      const ingest = new RegExp(`:${sentry.port}/`);
      assert.deepEqual(rx.spans.filter((s) => ingest.test(String(s.attributes["url.full"]))), []);
      const posts = sentry.requests.filter((r) => r.method === "POST");
      assert.ok(posts.length >= 4);
      assert.deepEqual(posts.flatMap((r) => TRACE_HEADERS.filter((h) => r.headers.has(h))), []);
      // Not-found pages sent nothing: every event is a failure of a page or an action above.
      const routes = sentry.items.map((i) => i.payload.tags.route).sort();
      assert.deepEqual(routes, ["/boom", "/boom", "/boom", "/feed/broken", "/late", "action fail"]);
    },
  );
});

Deno.test("telemetry: Deno's OpenTelemetry alone, Sentry off", async () => {
  const root = await telemetryProject();
  await using rx = startOtlpReceiver();
  await using server = await startServer(otlpEnv(rx), { root });
  const page = await server.fetch("/blog/first-post");
  const html = await page.text();
  assert.doesNotMatch(html, /sentry|baggage/i, "no trace meta for a Sentry SDK");
  await (await server.fetch("/boom")).text();
  const line = await server.waitForLog((l) => l.path === "/boom");
  const span = await rx.span((s) => s.kind === SERVER && s.attributes["url.path"] === "/boom");
  assert.equal(span.name, "GET /boom");
  assert.deepEqual([line.trace_id, line.span_id, line.sentry_event_id], [
    span.traceId,
    span.spanId,
    null,
  ]);
});

Deno.test("telemetry: a request past its deadline: its span named by its route, with the digest", async () => {
  const root = await telemetryProject();
  await using rx = startOtlpReceiver();
  await using server = await startServer({ ...otlpEnv(rx), REQUEST_TIMEOUT_MS: "300" }, { root });
  const res = await server.fetch("/stuck/7");
  assert.equal(res.status, 500);
  await res.body?.cancel();
  const line = await server.waitForLog((l) => l.path === "/stuck/7");
  assert.equal((line.error as { name: string }).name, "DeadlineExceeded");
  // The route's work is still waiting (for ever) when the answer goes out and Deno ends the span.
  const span = await rx.span((s) => s.kind === SERVER && s.attributes["url.path"] === "/stuck/7");
  assert.equal(span.name, "GET /stuck/:id");
  assert.equal(span.attributes["http.route"], "/stuck/:id");
  assert.equal(span.attributes["app.digest"], line.digest);
  assert.equal(span.traceId, line.trace_id);

  // A caller's sentry-trace without traceparent: the app's own server span, in the caller's trace,
  // ends with the answer too (it ended only when the route's work did: here, never).
  const continued = await server.fetch("/stuck/8", {
    headers: { "sentry-trace": `${CALLER_TRACE}-${CALLER_SPAN}-1` },
  });
  assert.equal(continued.status, 500);
  await continued.body?.cancel();
  const caller = await server.waitForLog((l) => l.path === "/stuck/8");
  const own = await rx.span((s) => s.kind === SERVER && s.traceId === CALLER_TRACE);
  assert.equal(own.name, "GET /stuck/:id");
  assert.equal(own.parentSpanId, CALLER_SPAN);
  assert.equal(own.attributes["app.digest"], caller.digest);
  assert.equal(caller.trace_id, CALLER_TRACE);
});

Deno.test("telemetry: a request that is not sampled: no span of the app's, failures still linked", async () => {
  const root = await telemetryProject();
  await using rx = startOtlpReceiver();
  await using sentry = startSentryReceiver();
  await using server = await startServer({
    ...tracedEnv(rx, sentry.dsn),
  }, { root });
  // The caller decided: not sampled (flag 00).
  const unsampled = { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00` };
  const html = await (await server.fetch("/counter", { headers: unsampled })).text();
  assert.match(
    html,
    new RegExp(`<meta name="sentry-trace" content="${CALLER_TRACE}-[0-9a-f]{16}-0"`),
  );
  // What the browser needs to keep the decision, no more: the flag, and a DSC saying "not sampled"
  // for its error events, with no `sample_rand` (there is nothing left to sample by it).
  const baggage = html.match(/<meta name="baggage" content="([^"]+)"/)![1].replaceAll("&amp;", "&");
  const { release, ...dsc } = dscOf(baggage);
  assert.ok(release, "the build's release");
  assert.deepEqual(dsc, {
    trace_id: CALLER_TRACE,
    sampled: "false",
    public_key: new URL(sentry.dsn).username,
    environment: "production",
    sample_rate: "1",
  });
  assert.equal(html.match(/<meta name="(sentry-trace|baggage|traceparent)"/g)?.length, 2);
  await (await server.fetch("/boom", { headers: unsampled })).text();
  const line = await server.waitForLog((l) => l.path === "/boom");
  const event = await sentry.waitFor(isErrorEvent);
  assert.equal(line.trace_id, CALLER_TRACE);
  assert.match(String(line.span_id), /^[0-9a-f]{16}$/);
  assert.deepEqual(
    [event.payload.contexts.trace.trace_id, event.payload.contexts.trace.span_id],
    [line.trace_id, line.span_id],
  );
  assert.equal((event.envelope.trace as Record<string, string>).sampled, "false");
  // A sampled request after them: once its spans are here, theirs would have been too.
  await (await server.fetch("/about")).text();
  await rx.span((s) => s.name === "GET /about");
  assert.deepEqual(rx.spans.filter((s) => s.traceId === CALLER_TRACE), [], "nothing exported");
});
