/**
 * Attack 13, finding 1: a caller's `baggage` under Deno's OpenTelemetry, as `deno task start` runs
 * it with a Sentry DSN (the launcher turns Deno's tracing on). Deno 2.9.6 ran its own baggage
 * propagator on every request before the app, outside any catch: a value it could not
 * percent-decode (`baggage: a=%`) threw there, and the request was never answered - nor its
 * connection closed once the client had gone. Now the launcher leaves that propagator out, and the
 * app reads the caller's `baggage` and writes it on outgoing calls itself.
 */
import assert from "node:assert/strict";
import { startSentryReceiver } from "shell/testing";
import { builtTarget, exchange, startTarget } from "./target.ts";

const FILES = {
  "routes/findings/ok.ts": `export const handler = { GET: () => new Response("ok") };\n`,
  "routes/findings/upstream.ts": `export const handler = {
    async GET() {
      const res = await fetch(Deno.env.get("UPSTREAM")!);
      return new Response(await res.text());
    },
  };\n`,
};

/** Values Deno's propagator could not decode: a bare `%`, in a key, past UTF-8. */
const UNDECODABLE = ["a=%", "%=1", "sentry-release=%ZZ,vendor=acme", "a=%C3%28"];

Deno.test("attack 13: a caller's baggage Deno cannot decode is answered, and the rest goes on", async () => {
  const built = await builtTarget(FILES);
  await using receiver = startSentryReceiver();
  // What the upstream a route calls was sent, in order.
  const seen: Headers[] = [];
  await using upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      seen.push(req.headers);
      return new Response("upstream");
    },
  );
  await using server = await startTarget(
    {
      SENTRY_DSN: receiver.dsn,
      SENTRY_TRACES_SAMPLE_RATE: "1",
      UPSTREAM: `http://127.0.0.1:${upstream.addr.port}/`,
    },
    { root: built.root, script: "lib/cli/launch.ts" },
  );
  for (const baggage of UNDECODABLE) {
    const head = `GET /findings/ok HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n` +
      `baggage: ${baggage}\r\nConnection: close\r\n\r\n`;
    const answer = await exchange(server.port, head, { timeoutMs: 5_000, headOnly: true });
    assert.equal(answer.status, 200, `baggage: ${baggage} (0: no answer)`);
  }

  // An outgoing call still carries the caller's other entries and the trace's DSC, once each.
  const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const res = await server.fetch("/findings/upstream", {
    headers: {
      traceparent: `00-${trace}-00f067aa0ba902b7-01`,
      baggage: `vendor=acme,broken=%ZZ,sentry-trace_id=${trace},sentry-public_key=callerkey`,
    },
  });
  assert.equal(await res.text(), "upstream");
  const sent = seen.at(-1)!;
  assert.equal(sent.get("traceparent")?.split("-")[1], trace, "the call is on the caller's trace");
  const members = sent.get("baggage")!.split(",");
  assert.ok(members.includes("vendor=acme"), `others' entries kept: ${members}`);
  assert.ok(!members.some((member) => member.startsWith("broken=")), "an undecodable one is not");
  assert.ok(members.includes(`sentry-trace_id=${trace}`), `the trace's DSC: ${members}`);
  assert.ok(members.includes("sentry-public_key=callerkey"), "the caller's DSC, as it came");
  assert.equal(new Set(members.map((m) => m.split("=")[0])).size, members.length, "once each");
});
