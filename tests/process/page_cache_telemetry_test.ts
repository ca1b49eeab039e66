/**
 * @module
 * Page cache hits answered ahead of the app's middleware (lib/cache/fast_hit.ts) under production's
 * telemetry — Deno's OpenTelemetry exporting to an OTLP/HTTP receiver on 127.0.0.1, Sentry on for
 * errors — in a real process: each hit's server span is named after its route with `http.route`
 * and has no child span; sampled out, nothing is exported; a `sentry-trace` without `traceparent`
 * goes the whole way, where its trace is continued. That a hit skipped the chain is read from the
 * server: it serves the app with its telemetry's middleware counted (`GET /_chained`).
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import {
  otlpEnv,
  type OtlpReceiver,
  type OtlpSpan,
  startOtlpReceiver,
} from "../helpers/otlp_receiver.ts";
import { startSentryReceiver } from "shell/testing";
import { startServer, type TestServer } from "../helpers/server.ts";

const SERVER = 2;
const CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";
const ROUTE = "/cached/:slug";

/** The app as lib/cli/start.ts makes it from the environment, its telemetry's middleware counted. */
const COUNTED_SERVER = `import "./lib/cli/node_env.ts";
import manifest from "./_build/manifest.gen.ts";
import { settingsOrExit } from "./lib/cli/settings.ts";
import { loadTelemetry } from "./lib/cli/telemetry.ts";
import { withRelease } from "./lib/sentry/config.ts";
import { createApp } from "./lib/server/app.tsx";
import type { Telemetry } from "./lib/server/telemetry.ts";

const settings = settingsOrExit();
const loaded = await loadTelemetry(settings.sentry && withRelease(settings.sentry, manifest.buildId));
if (!loaded?.middleware) throw new Error("no telemetry middleware to count");
let chained = 0;
const telemetry: Telemetry = {
  ...loaded,
  middleware: (c, next) => {
    chained++;
    return loaded.middleware!(c, next);
  },
};
const kv = await Deno.openKv(":memory:");
const app = createApp(manifest, { ...settings.app, root: Deno.cwd(), telemetry, kv });
Deno.serve(
  { hostname: "127.0.0.1", port: Number(Deno.env.get("PORT")) },
  (req, info) => new URL(req.url).pathname === "/_chained" ? Response.json(chained) : app.fetch(req, info),
);
`;

/** A cached page with a parameter, large enough to be held compressed, and the counted server. */
function cachedProject(): Promise<string> {
  return builtCopy("page-cache-telemetry", {
    "counted_server.ts": COUNTED_SERVER,
    "routes/cached/[slug].tsx": `export const cache = { maxAge: 3600 };
export default function Cached({ params }: { params: { slug: string } }) {
  return <main><h1>{params.slug}</h1>{Array.from({ length: 40 }, (_, i) => <p key={i}>line {i} of a cached page</p>)}</main>;
}\n`,
  });
}

/** The counted server with `env`, answering as `APP_ORIGIN` (the page cache is on). */
async function countedServer(env: Record<string, string>): Promise<TestServer> {
  return await startServer((port) => ({
    ...env,
    APP_ORIGIN: `http://127.0.0.1:${port}`,
    LOG_REQUESTS: "1",
  }), { root: await cachedProject(), script: "counted_server.ts" });
}

/** Requests that went through the telemetry's middleware so far. */
async function chained(server: TestServer): Promise<number> {
  return await (await server.fetch("/_chained")).json();
}

/** `path` asked for with the request id `id`: its `X-Cache`. */
async function ask(
  server: TestServer,
  path: string,
  id: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<string | null> {
  const res = await server.fetch(path, {
    method: init.method,
    headers: { "X-Request-Id": id, "Accept-Encoding": "gzip", ...init.headers },
  });
  await res.arrayBuffer();
  return res.headers.get("x-cache");
}

/** The request log line of the request `id`, as its record (exported in its span's context) holds it. */
async function lineOf(rx: OtlpReceiver, id: string) {
  const record = await rx.log((l) => String(l.body).includes(`"request_id":"${id}"`));
  return { record, line: JSON.parse(String(record.body)) };
}

/**
 * The server span a request was answered in, by the ids its request log line names: those its
 * record carries too. Before, the line named none.
 */
async function spanOf(rx: OtlpReceiver, id: string): Promise<OtlpSpan> {
  const { record, line } = await lineOf(rx, id);
  assert.ok(record.spanId, `the log line of ${id} carries its span`);
  assert.deepEqual(
    { trace_id: line.trace_id, span_id: line.span_id },
    { trace_id: record.traceId, span_id: record.spanId },
    `the line of ${id} names its span`,
  );
  return await rx.span((s) => s.traceId === line.trace_id && s.spanId === line.span_id);
}

Deno.test("page cache hits ahead of the chain: each span named after its route, no child", async (t) => {
  await using rx = startOtlpReceiver();
  await using sentry = startSentryReceiver();
  await using server = await countedServer({
    ...otlpEnv(rx),
    OTEL_TRACES_SAMPLER: "always_on",
    SENTRY_DSN: sentry.dsn,
    SENTRY_TRACES_SAMPLE_RATE: "1",
  });
  assert.equal(await ask(server, "/cached/first", "miss"), "MISS");
  const miss = await spanOf(rx, "miss");
  assert.equal(miss.name, `GET ${ROUTE}`, "the whole app's naming, for comparison");
  const before = await chained(server);
  assert.ok(before >= 1, "the miss went through the telemetry's middleware");

  await t.step(
    "GET, HEAD and a caller's trace: answered ahead, spans as requestSpan names them",
    async () => {
      const hits = [
        { id: "hit-get", method: "GET" },
        { id: "hit-head", method: "HEAD" },
        {
          id: "hit-traced",
          method: "GET",
          headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
        },
      ];
      for (const hit of hits) assert.equal(await ask(server, "/cached/first", hit.id, hit), "HIT");
      assert.equal(await chained(server), before, "no hit went through the middleware");
      for (const { id, method } of hits) {
        const span = await spanOf(rx, id);
        assert.equal(span.kind, SERVER, id);
        assert.equal(span.scope, "deno", "Deno's own span, renamed");
        assert.equal(span.name, `${method} ${ROUTE}`, id);
        assert.equal(span.attributes["http.route"], ROUTE, id);
        assert.equal(span.attributes["url.path"], "/cached/first", id);
        assert.equal(span.attributes["app.not_found"], undefined, id);
      }
      const traced = await spanOf(rx, "hit-traced");
      assert.deepEqual([traced.traceId, traced.parentSpanId], [CALLER_TRACE, CALLER_SPAN]);
      // A child ends before its parent: exported no later than the server span already here.
      const hitSpans = await Promise.all(hits.map(({ id }) => spanOf(rx, id)));
      const children = rx.spans.filter((s) => hitSpans.some((h) => s.parentSpanId === h.spanId));
      assert.deepEqual(children.map((s) => s.name), [], "no child span");
    },
  );

  await t.step(
    "sentry-trace without traceparent: the whole app, continuing that trace",
    async () => {
      const trace = "1af7651916cd43dd8448eb211c80319c";
      const at = await chained(server);
      const state = await ask(server, "/cached/first", "hit-sentry", {
        headers: { "sentry-trace": `${trace}-${CALLER_SPAN}-1` },
      });
      assert.equal(state, "HIT");
      assert.equal(await chained(server), at + 1, "through the middleware");
      const span = await rx.span((s) => s.traceId === trace && s.kind === SERVER);
      assert.equal(span.name, `GET ${ROUTE}`);
      assert.equal(span.parentSpanId, CALLER_SPAN);
      assert.equal(span.scope, "app", "requestSpan's span continuing the caller's trace");
      const { line } = await lineOf(rx, "hit-sentry");
      assert.deepEqual(
        [line.trace_id, line.span_id],
        [trace, span.spanId],
        "the line names the span in the caller's trace, as a failure's line would",
      );
    },
  );
});

Deno.test("page cache hits ahead of the chain, sampled out: nothing exported", async () => {
  await using rx = startOtlpReceiver();
  await using sentry = startSentryReceiver();
  // Ratio 0 for new traces; parent-based, so that a caller's sampled trace is a sentinel.
  await using server = await countedServer({
    ...otlpEnv(rx),
    OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
    OTEL_TRACES_SAMPLER_ARG: "0",
    SENTRY_DSN: sentry.dsn,
    SENTRY_TRACES_SAMPLE_RATE: "0",
  });
  assert.equal(await ask(server, "/cached/first", "miss"), "MISS");
  const before = await chained(server);
  for (let i = 0; i < 3; i++) {
    assert.equal(
      await ask(server, "/cached/first", `hit-${i}`, { method: i ? "GET" : "HEAD" }),
      "HIT",
    );
  }
  assert.equal(await chained(server), before, "answered ahead of the middleware");
  // A sampled hit after them: once its span is here, theirs would have been too.
  const sentinel = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
  assert.equal(
    await ask(server, "/cached/first", "sentinel", { headers: { traceparent: sentinel } }),
    "HIT",
  );
  const span = await spanOf(rx, "sentinel");
  assert.equal(span.name, `GET ${ROUTE}`);
  assert.deepEqual(
    rx.spans.filter((s) => s.traceId !== CALLER_TRACE).map((s) =>
      `${s.name} ${s.attributes["url.path"]}`
    ),
    [],
    "nothing exported but the sentinel's trace",
  );
  assert.equal(await chained(server), before);
});
