/**
 * Attack 11: an envelope whose header names a DSN Sentry's parser refuses was answered 403, but
 * the parser first wrote the client's text whole to the server's output (`Invalid Sentry Dsn: …`):
 * a mebibyte a request (300 posts put 300 MB on stderr in 13 s, the server at 809 MB RSS), and
 * lines of any content - a forged JSON log line among the app's own.
 *
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

Deno.test("attack 11: a client's DSN never reaches the server's output", async () => {
  await using receiver = startSentryReceiver();
  const server = await startTarget({
    SENTRY_DSN: receiver.dsn,
    SENTRY_TUNNEL: "1",
    SENTRY_TRACES_SAMPLE_RATE: "0",
  });
  const forged = JSON.stringify({ level: "error", msg: "forged by a client" });
  const tunnel = async (dsn: string) => {
    const res = await server.fetch("/_sentry", {
      method: "POST",
      body: `${JSON.stringify({ dsn })}\n{"type":"event"}\n{}\n`,
    });
    await res.body?.cancel();
    return res.status;
  };
  try {
    assert.equal(await tunnel(`http://not-a-dsn\n${forged}`), 403);
    assert.equal(await tunnel(`forged-${"x".repeat(100_000)}`), 403);
    // Still ours, however it is spelled as Sentry's SDKs write it; another project's is not.
    assert.equal(await tunnel(receiver.dsn), 200);
    const other = new URL(receiver.dsn);
    other.pathname = "/2";
    assert.equal(await tunnel(other.href), 403);
  } finally {
    await server.stop();
  }
  const output = [...server.stdout, ...server.stderr].join("\n");
  assert.ok(!output.includes("forged"), output.slice(0, 2_000));
  assert.equal(receiver.envelopes(), 1);
});
