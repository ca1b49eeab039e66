/**
 * @module
 * A stand-in for Sentry's ingest on loopback: accepts envelopes (`/api/<project>/envelope/`) and
 * OTLP exports (`/api/<project>/integration/otlp/v1/…`), answers 200 at once and counts what
 * arrived, so "Sentry on" costs what sending really costs.
 */

export interface Receiver extends AsyncDisposable {
  /** A DSN that points the SDKs here. */
  dsn: string;
  /** Envelope item types seen so far, with counts (`transaction`, `event`, …). */
  items: Map<string, number>;
  envelopes(): number;
  /** How many OTLP exports (traces, logs) were posted. */
  otlpPosts(): number;
}

export function startReceiver(): Receiver {
  const items = new Map<string, number>();
  let envelopes = 0;
  let otlpPosts = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method === "POST" && /\/envelope\/?$/.test(new URL(req.url).pathname)) {
      envelopes++;
      // Item headers sit near the start; decoding only that keeps the receiver's share of the
      // CPU (which the server under test competes for) small.
      const head = new TextDecoder().decode(
        new Uint8Array(await req.arrayBuffer(), 0).subarray(0, 4096),
      );
      for (const [, type] of head.matchAll(/^\{"type":"([a-z_]+)"/gm)) {
        items.set(type, (items.get(type) ?? 0) + 1);
      }
    } else {
      if (/\/integration\/otlp\//.test(new URL(req.url).pathname)) otlpPosts++;
      await req.body?.cancel();
    }
    return Response.json({});
  });
  return {
    dsn: `http://public@127.0.0.1:${server.addr.port}/1`,
    items,
    envelopes: () => envelopes,
    otlpPosts: () => otlpPosts,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
