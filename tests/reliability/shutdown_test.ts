/**
 * SIGTERM while requests are in flight: every streamed page that had started completes (its
 * Suspense section included), and the process exits on its own, cleanly, in bounded time — with
 * Sentry on, after flushing a transaction for each of those requests.
 */
import assert from "node:assert/strict";
import { isTransaction, startSentryReceiver } from "shell/testing";
import { startServer, type TestServer } from "../helpers/server.ts";

const IN_FLIGHT = 20;

async function stopDuringLoad(server: TestServer) {
  // Wait for each response's shell: the request is in flight, its Suspense section still pending.
  const responses = await Promise.all(
    Array.from({ length: IN_FLIGHT }, () => server.fetch("/streaming")),
  );
  const began = performance.now();
  const exited = server.stop();
  const bodies = await Promise.all(responses.map((res) => res.text()));
  const code = await exited;
  const took = performance.now() - began;

  for (const [i, res] of responses.entries()) {
    assert.equal(res.status, 200);
    assert.match(bodies[i], /Streamed in after the shell\./, `response ${i} was cut short`);
    assert.match(bodies[i], /<\/html>/);
  }
  assert.equal(code, 0, "exit code");
  assert.ok(took < 10_000, `shutdown took ${Math.round(took)} ms`);
}

Deno.test("SIGTERM during load lets in-flight streamed pages finish", async () => {
  await using server = await startServer();
  await stopDuringLoad(server);
});

Deno.test("SIGTERM during load flushes Sentry's transactions before the exit", async () => {
  await using receiver = startSentryReceiver();
  await using server = await startServer({
    SENTRY_DSN: receiver.dsn,
    SENTRY_TRACES_SAMPLE_RATE: "1.0",
  });
  await stopDuringLoad(server);
  const streamed = receiver.items.filter((item) =>
    isTransaction(item) && item.payload.transaction === "GET /streaming"
  );
  assert.equal(
    streamed.length,
    IN_FLIGHT,
    "one transaction per in-flight request, sent before exit",
  );
});
