/**
 * @module
 * A local upstream on 127.0.0.1 that records the headers of every request it gets: what an
 * outgoing `fetch` carried (trace headers, or none).
 */
export function recordingUpstream() {
  const seen: Headers[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    seen.push(req.headers);
    return new Response("ok");
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    seen,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
