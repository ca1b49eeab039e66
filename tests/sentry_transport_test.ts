/**
 * @module
 * The server SDK's transport (`lib/sentry/transport.ts`) in-process, to a receiver on 127.0.0.1
 * that refuses every envelope: what it does not deliver is said in a `warn` line at once, then once
 * a quiet time at most - and the losses of that quiet time are said when it has passed, or at the
 * flush that closes the SDK, with no later loss needed to bring them out; and a flush that gives up
 * on sends still under way (a hung ingest) says them, since they end after the process. (The whole server, its
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

Deno.test("sentry transport: sends still under way when the flush before the exit gives up are said", async () => {
  // An ingest that takes the envelope and does not answer (for longer than the 2 s the server
  // waits at exit, shorter than a send's 5 s): the process exits with the send under way.
  const answer = Promise.withResolvers<void>();
  const received = Promise.withResolvers<void>();
  await using ingest = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    received.resolve();
    await answer.promise;
    return new Response(null, { status: 200 });
  });
  const transport = timedTransport({
    url: `http://127.0.0.1:${ingest.addr.port}/api/1/envelope/`,
    recordDroppedEvent: () => {},
  }, QUIET_MS);
  using logs = captureLogs();
  const warnings = () => logs.lines.filter((line) => line.level === "warn");
  const sent = transport.send(envelope(1));
  try {
    await received.promise;
    assert.equal(await transport.flush(1), false, "the flush gave up");
    // Before, nothing: the send ended only after the process was gone, and no line said so.
    assert.equal(warnings().length, 1, "said at the flush");
    assert.equal(
      warnings()[0].msg,
      "Sentry did not take what this process sent: still under way when the SDK was flushed",
    );
    assert.equal(warnings()[0].undelivered, 0);
    assert.equal(warnings()[0].under_way, 1);
  } finally {
    answer.resolve();
  }
  assert.equal((await sent).statusCode, 200);
  await transport.flush(1_000);
  assert.equal(warnings().length, 1, "delivered after all: nothing more to say");
});
