/**
 * SIGTERM while requests are in flight: every streamed page that had started completes (its
 * Suspense section included), and the process exits on its own, cleanly, in bounded time.
 */
import assert from "node:assert/strict";
import { startServer } from "../helpers/server.ts";

const IN_FLIGHT = 20;

Deno.test("SIGTERM during load lets in-flight streamed pages finish", async () => {
  await using server = await startServer();
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
    assert.match(bodies[i], /Sunny, with a chance of hydration\./, `response ${i} was cut short`);
    assert.match(bodies[i], /<\/html>/);
  }
  assert.equal(code, 0, "exit code");
  assert.ok(took < 10_000, `shutdown took ${Math.round(took)} ms`);
});
