/**
 * @module
 * A background job's trace, under `deno task start`'s launcher with Deno's OpenTelemetry exporting
 * to an OTLP receiver on 127.0.0.1 and the real `@sentry/deno` sending to a Sentry receiver: each
 * try of a job enqueued by a request is a span named after the job, with its name, attempt and key,
 * in the request's trace (its message carries the request's `traceparent`); a failed try's span is
 * marked (status error, the digest), and its Sentry event and JSON line carry that trace. Before,
 * a job made no span, and its failure's event and line carried no trace at all.
 */
import assert from "node:assert/strict";
import { isErrorEvent, startSentryReceiver } from "shell/testing";
import { builtCopy } from "../helpers/built_copy.ts";
import { type OtlpSpan, startOtlpReceiver, tracedEnv } from "../helpers/otlp_receiver.ts";
import { startServer } from "../helpers/server.ts";

const SERVER = 2;
const CONSUMER = 5;
const ERROR = 2;

const JOBS = `import { defineJobs } from "shell/data";

export default defineJobs({
  greet: { run(_: { to: string }) {} },
  breaks: { retries: [], run(_: { to: string }) { throw new Error("the job broke"); } },
  nightly: { cron: "0 3 * * *", run() {} },
});
`;

const ENQUEUE = `import jobs from "@/routes/_jobs.ts";
import type { Handlers } from "shell";
import { kvOf } from "shell/data";

export const handler: Handlers = {
  async POST(req, ctx) {
    const name = new URL(req.url).searchParams.get("job") as "greet" | "breaks";
    await jobs.enqueue(kvOf(ctx), name, { to: "ada" }, { key: \`delivery-\${name}\` });
    return new Response("queued", { status: 202 });
  },
};
`;

Deno.test("a job enqueued by a request: its try a span in the request's trace, a failure's event on it", async () => {
  const root = await builtCopy("jobs-telemetry", {
    "routes/_jobs.ts": JOBS,
    "routes/api/enqueue.ts": ENQUEUE,
  });
  await using rx = startOtlpReceiver();
  await using sentry = startSentryReceiver();
  // Deno's own test hook: the cron fires 50 ms after its last firing ended, not at 03:00.
  const env = { ...tracedEnv(rx, sentry.dsn), DENO_CRON_TEST_SCHEDULE_OFFSET: "50" };
  await using server = await startServer(env, {
    root,
    script: "lib/cli/launch.ts",
  });
  const enqueue = async (job: string) => {
    const res = await server.fetch(`/api/enqueue?job=${job}`, { method: "POST" });
    assert.equal(res.status, 202, await res.text());
    return await rx.span((s) =>
      s.kind === SERVER && s.attributes["url.query"] === `job=${job}` ||
      s.kind === SERVER && String(s.attributes["url.full"] ?? "").endsWith(`job=${job}`)
    );
  };
  const jobSpan = (name: string) => (s: OtlpSpan) => s.kind === CONSUMER && s.name === name;

  const request = await enqueue("greet");
  const greet = await rx.span(jobSpan("greet"));
  assert.equal(greet.traceId, request.traceId, "the job's span is in the request's trace");
  assert.ok(greet.parentSpanId, "a child of a span of the request");
  assert.equal(greet.scope, "app");
  assert.deepEqual(
    [greet.attributes["app.job"], greet.attributes["app.job.attempt"]],
    ["greet", 0],
  );
  assert.equal(greet.attributes["app.job.key"], "delivery-greet");
  assert.notEqual(greet.status.code, ERROR);

  const failing = await enqueue("breaks");
  const broke = await rx.span(jobSpan("breaks"));
  assert.equal(broke.traceId, failing.traceId);
  assert.equal(broke.status.code, ERROR);
  const line = await server.waitForLog((l) => l.job === "breaks" && l.level === "error");
  const event = await sentry.waitFor((i) => isErrorEvent(i) && i.payload.tags.job === "breaks");
  assert.equal(broke.attributes["app.digest"], line.digest);
  assert.equal(event.payload.tags.digest, line.digest);
  assert.deepEqual([line.trace_id, line.span_id], [broke.traceId, broke.spanId]);
  assert.equal(event.payload.contexts.trace.trace_id, failing.traceId);
  assert.equal(event.payload.contexts.trace.span_id, broke.spanId);
  assert.equal((event.envelope.trace as Record<string, string>).trace_id, failing.traceId);

  // A cron job's run: a child of the span Deno makes for the firing that enqueued it (the docs
  // said a trace of its own).
  const nightly = await rx.span(jobSpan("nightly"));
  const firing = await rx.span((s) => s.name === "deno.cron" && s.spanId === nightly.parentSpanId);
  assert.equal(firing.traceId, nightly.traceId);
});
