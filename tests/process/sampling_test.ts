/**
 * Who decides what is traced under `deno task start`'s launcher (Deno's OpenTelemetry exporting to
 * Sentry's OTLP endpoint, a receiver on 127.0.0.1 standing in for both): below a rate of 1 the
 * ratio decides by the trace id, so a client that marks every request "sampled" (`traceparent:
 * …-01`) does not get them traced; Sentry's own posts to its ingest still make no span.
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import { startOtlpReceiver } from "../helpers/otlp_receiver.ts";
import { startServer } from "../helpers/server.ts";

const hex = (digits: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(digits / 2)))
    .map((byte) => byte.toString(16).padStart(2, "0")).join("");

/**
 * A trace id whose low 64 bits, which Deno's ratio sampler decides by, are at least 2^63: never
 * kept at a ratio below one half, so the test does not depend on chance.
 */
const unluckyTrace = () => {
  const low = crypto.getRandomValues(new Uint8Array(8));
  low[0] |= 0x80;
  const lowHex = Array.from(low).map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex(16)}${lowHex}`;
};

Deno.test("sampling: a caller's sampled flag does not get its requests traced (deno task start)", async () => {
  const root = await builtCopy("sampling", {
    "routes/boom.tsx": `export default function Boom() { throw new Error("boom"); }\n`,
  });
  await using rx = startOtlpReceiver();
  await using server = await startServer({
    SENTRY_DSN: `http://publickey@127.0.0.1:${rx.port}/42`,
    // 0.0-ish: the launcher turns OpenTelemetry on only for a rate above 0.
    SENTRY_TRACES_SAMPLE_RATE: "0.001",
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "100",
    OTEL_BLRP_SCHEDULE_DELAY: "100",
  }, { root, script: "lib/cli/launch.ts" });

  const forced = Array.from({ length: 40 }, unluckyTrace);
  assert.ok(forced.every((id) => /^[0-9a-f]{32}$/.test(id)));
  for (const traceId of forced) {
    const traceparent = `00-${traceId}-${hex(16)}-01`;
    await (await server.fetch("/about", { headers: { traceparent } })).text();
  }
  // A failure: Sentry's post of its event goes out under the "quiet" parent (lib/sentry/otel_fetch.ts).
  await (await server.fetch("/boom")).text();
  const envelope = () => rx.requests.some((r) => r.path === "/api/42/envelope/");
  for (let i = 0; i < 100 && !envelope(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(envelope(), "the failure's event reached the ingest");

  // The ratio decides by the trace id alone: one whose low 64 bits are 0 is kept at any ratio (so a
  // caller that picks its trace ids still can: docs/telemetry.md#sampling). Its span ends after all
  // of the above, so once it is here, theirs would have been too.
  const kept = `${hex(16)}${"0".repeat(16)}`;
  await (await server.fetch("/blog/first-post", {
    headers: { traceparent: `00-${kept}-${hex(16)}-01` },
  })).text();
  await rx.span((s) => s.traceId === kept && s.name === "GET /blog/:slug");

  const traced = rx.spans.filter((s) => forced.includes(s.traceId));
  assert.deepEqual(traced.map((s) => s.name), [], "no request traced for its caller's flag");
  const ingest = rx.spans.filter((s) => String(s.attributes["url.full"]).includes(`:${rx.port}/`));
  assert.deepEqual(ingest.map((s) => s.name), [], "Sentry's own posts make no span");
});
