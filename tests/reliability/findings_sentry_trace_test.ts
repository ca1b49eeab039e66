/**
 * Attack 13, finding 2: a caller's `sentry-trace` of ids that are all zeros, under Deno's
 * OpenTelemetry (`deno task start` with a DSN). A `sentry-trace` without `traceparent` is continued
 * by a span the app makes in the caller's trace, and Deno's tracer throws on ids of all zeros: every
 * such request, to any page, was a 500 with a digest, an error line and a Sentry event - as many
 * events as a client sent requests. Now such a header is no trace: the request goes on under Deno's
 * own span.
 */
import assert from "node:assert/strict";
import { isErrorEvent, startSentryReceiver } from "shell/testing";
import { builtTarget, startTarget } from "./target.ts";

const FILES = {
  "routes/findings/ok.ts": `export const handler = { GET: () => new Response("ok") };\n`,
  "routes/findings/boom.ts": `export const handler = {
    GET() {
      throw new Error("boom, on purpose");
    },
  };\n`,
};

const ZEROS = [
  `${"0".repeat(32)}-${"0".repeat(16)}-1`,
  `${"0".repeat(32)}-b7ad6b7169203331-1`,
  `0af7651916cd43dd8448eb211c80319c-${"0".repeat(16)}`,
];

Deno.test("attack 13: a sentry-trace of zeros is no trace, not a failure", async () => {
  const built = await builtTarget(FILES);
  await using receiver = startSentryReceiver();
  await using server = await startTarget(
    { SENTRY_DSN: receiver.dsn, SENTRY_TRACES_SAMPLE_RATE: "1" },
    { root: built.root, script: "lib/cli/launch.ts" },
  );
  for (const header of ZEROS) {
    const res = await server.fetch("/findings/ok", { headers: { "sentry-trace": header } });
    assert.equal(res.status, 200, `sentry-trace: ${header}`);
    assert.equal(await res.text(), "ok");
  }
  // The one failure of the run is the route's own: the first event Sentry gets is its.
  const boom = await server.fetch("/findings/boom");
  await boom.body?.cancel();
  const event = await receiver.waitFor(isErrorEvent);
  assert.match(event.payload.exception.values[0].value, /boom, on purpose/);
});
