/**
 * Issue 29, attack 8: the Sentry tunnel (`SENTRY_TUNNEL=1`) against a client that posts slowly. Its
 * cap on forwards under way (16) counted uploads still arriving, so sixteen connections that
 * announced an envelope and sent a few bytes of it - nothing else, again every deadline - had every
 * browser's error reports refused (503) while Sentry itself was fine. An upload is held by the
 * app's body budget and the request's deadline like any other; the cap is for forwards.
 */
import assert from "node:assert/strict";
import { startSentryReceiver } from "shell/testing";
import { exchange, startTarget } from "./target.ts";

/** The tunnel's cap on forwards under way. */
const STALLED = 16;

Deno.test("attack 8: stalled uploads do not shut the tunnel", async () => {
  await using receiver = startSentryReceiver();
  await using server = await startTarget({
    SENTRY_DSN: receiver.dsn,
    SENTRY_TUNNEL: "1",
    SENTRY_TRACES_SAMPLE_RATE: "0",
  });
  const held: Deno.Conn[] = [];
  const stalled = Array.from({ length: STALLED }, () =>
    exchange(
      server.port,
      `POST /_sentry HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n`,
      {
        // Gives up long before the server's deadline (10 s): nothing comes back meanwhile.
        timeoutMs: 1_000,
        body: new TextEncoder().encode(`{"dsn":`),
        keepOpen: (conn) => held.push(conn),
      },
    ));
  try {
    const waited = await Promise.all(stalled);
    assert.ok(waited.every((answer) => answer.status === 0), "the uploads are still awaited");
    const envelope = `${JSON.stringify({ dsn: receiver.dsn })}\n{"type":"event"}\n` +
      `{"message":"from a browser"}\n`;
    const res = await server.fetch("/_sentry", { method: "POST", body: envelope });
    await res.body?.cancel();
    assert.equal(res.status, 200, "a browser's envelope goes through");
    assert.equal(receiver.envelopes(), 1);
  } finally {
    for (const conn of held) conn.close();
  }
});
