/**
 * @module
 * A down or wrong OTLP endpoint is said at start-up: Deno's exporter drops the batches an endpoint
 * refuses without a word on stdout or stderr, so the server posts one empty export to it
 * (`lib/otel/probe.ts`) and a refusal is one `warn` line - for a closed port, for an endpoint
 * answering 500 - and never more than one, however many requests are traced; an endpoint that
 * takes traces gets the probe and no line is written.
 */
import assert from "node:assert/strict";
import { otlpEnv, startOtlpReceiver } from "../helpers/otlp_receiver.ts";
import { CLOSED_PORT, startServer, type TestServer } from "../helpers/server.ts";

const REFUSED = /^OpenTelemetry: the OTLP endpoint refuses traces/;
const refusals = (server: TestServer) =>
  server.logs().filter((line) => REFUSED.test(String(line.msg)));

/** Requests the server traces: none of them adds a line. */
async function traced(server: TestServer, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await (await server.fetch("/")).body?.cancel();
}

Deno.test("otlp probe: a closed port is one warn line at start-up, not one per batch", async () => {
  const endpoint = `http://127.0.0.1:${CLOSED_PORT}`;
  await using server = await startServer({ ...otlpEnv({ url: endpoint }) });
  const line = await server.waitForLog((line) => REFUSED.test(String(line.msg)), 10_000);
  assert.equal(line.level, "warn");
  assert.equal(line.endpoint, `${endpoint}/v1/traces`);
  await traced(server, 20);
  assert.equal(refusals(server).length, 1);
  assert.deepEqual(server.stderr.filter((text) => text.trim() !== ""), []);
});

Deno.test("otlp probe: an endpoint answering 500 is one warn line naming the status", async () => {
  const paths: string[] = [];
  await using receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    paths.push(new URL(req.url).pathname);
    return new Response("down for maintenance", { status: 500 });
  });
  const url = `http://127.0.0.1:${receiver.addr.port}`;
  await using server = await startServer({ ...otlpEnv({ url }) });
  const line = await server.waitForLog((line) => REFUSED.test(String(line.msg)), 10_000);
  assert.match(String(line.msg), /\(HTTP 500\)/);
  assert.equal(line.endpoint, `${url}/v1/traces`);
  assert.ok(paths.includes("/v1/traces"), paths.join());
  await traced(server, 20);
  assert.equal(refusals(server).length, 1);
});

Deno.test("otlp probe: an endpoint that takes traces gets the probe, and no line is written", async () => {
  await using receiver = startOtlpReceiver();
  await using server = await startServer(otlpEnv(receiver));
  await traced(server, 1);
  // A span of the request arrives after the probe's answer was read: a refusal would be written.
  await receiver.span((span) => span.kind === 2);
  assert.ok(receiver.requests.some((request) => request.path === "/v1/traces"));
  assert.deepEqual(refusals(server), []);
});

Deno.test("otlp probe: an endpoint that redirects is a refusal, and its target gets nothing", async () => {
  // Deno's exporter does not follow a redirect: each batch is lost. The probe followed it, said
  // nothing, and posted the export's headers (an API key) to wherever the redirect pointed.
  const elsewhere: (string | null)[] = [];
  await using target = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    elsewhere.push(req.headers.get("x-api-key"));
    return new Response("{}");
  });
  await using receiver = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response(null, {
        status: 307,
        headers: { location: `http://localhost:${target.addr.port}/v1/traces` },
      }),
  );
  const url = `http://127.0.0.1:${receiver.addr.port}`;
  await using server = await startServer({
    ...otlpEnv({ url }),
    OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=secret-key",
  });
  const line = await server.waitForLog((line) => REFUSED.test(String(line.msg)), 10_000);
  assert.match(String(line.msg), /\(HTTP 307\)/);
  assert.deepEqual(elsewhere, [], "nothing posted where the redirect points");
});
