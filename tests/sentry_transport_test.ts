/**
 * @module
 * The server SDK's transport (`lib/sentry/transport.ts`) in-process, to a receiver on 127.0.0.1
 * that refuses every envelope: what it does not deliver is said in a `warn` line at once, then once
 * a quiet time at most - and the losses of that quiet time are said when it has passed, or at the
 * flush that closes the SDK, with no later loss needed to bring them out. (The whole server, its
 * SDK and a refusing Sentry: tests/process/sentry_process_test.ts.)
 */
import assert from "node:assert/strict";
import type { Envelope } from "@sentry/core";
import { timedTransport } from "../lib/sentry/transport.ts";
import { Arrivals } from "../lib/testing/arrivals.ts";
import { captureLogs, startSentryReceiver } from "../lib/testing.ts";

/** Short, for the test; the server's is a minute. */
const QUIET_MS = 200;

function envelope(i: number): Envelope {
  const id = i.toString(16).padStart(32, "0");
  const sent_at = new Date().toISOString();
  return [{ event_id: id, sent_at }, [[{ type: "event" }, { event_id: id, message: `lost ${i}` }]]];
}

/** A refusing receiver, a transport to it, and the `warn` lines it writes as they come. */
async function refused(
  run: (
    transport: ReturnType<typeof timedTransport>,
    warnings: () => Record<string, unknown>[],
    warning: (n: number) => Promise<Record<string, unknown>>,
  ) => Promise<void>,
): Promise<void> {
  await using receiver = startSentryReceiver({ status: 500 });
  const { host } = new URL(receiver.dsn);
  const transport = timedTransport({
    url: `http://${host}/api/1/envelope/`,
    recordDroppedEvent: () => {},
  }, QUIET_MS);
  using logs = captureLogs();
  const arrivals = new Arrivals();
  const capturing = console.log;
  console.log = (...args: unknown[]) => {
    capturing(...args);
    arrivals.arrived();
  };
  const warnings = () => logs.lines.filter((line) => line.level === "warn");
  await run(
    transport,
    warnings,
    (n) => arrivals.until(() => warnings()[n - 1], 10_000, () => `no warn line ${n}`),
  );
}

Deno.test("sentry transport: the losses after a notice are said when its quiet time has passed, with no later loss", async () => {
  await refused(async (transport, warnings, warning) => {
    await transport.send(envelope(1));
    assert.equal(warnings().length, 1, "the first loss is said at once");
    assert.equal(warnings()[0].undelivered, 1);
    await transport.send(envelope(2));
    await transport.send(envelope(3));
    assert.equal(warnings().length, 1, "not again within the quiet time");
    // Before, these two were said only if a loss came after the quiet time: never, here.
    const trailing = await warning(2);
    assert.equal(trailing.msg, "Sentry did not take what this process sent: it answered 500");
    assert.equal(trailing.undelivered, 2);
    assert.equal(trailing.notice_every_ms, QUIET_MS);
  });
});

Deno.test("sentry transport: the losses after a notice are said at the flush that closes the SDK", async () => {
  await refused(async (transport, warnings) => {
    await transport.send(envelope(1));
    await transport.send(envelope(2));
    assert.equal(warnings().length, 1);
    await transport.flush(1_000);
    assert.equal(warnings().length, 2, "said at the flush, not a quiet time later");
    assert.equal(warnings()[1].undelivered, 1);
    await transport.flush(1_000);
    assert.equal(warnings().length, 2, "nothing lost since: nothing said");
  });
});
