/**
 * @module
 * Attack 15, finding 1: `deno task dev` answered any `Host`. It listens on loopback, but a page on
 * another site reaches loopback by DNS rebinding (`evil.example` resolving to 127.0.0.1), and is
 * then same-origin with what the dev server answers for `Host: evil.example:8000`: the browser
 * build's source maps (the app's sources), the error page (the server's stderr), the event
 * stream, stack mapping (its `Origin` check saw the same host). The dev server, over real HTTP on
 * loopback, now answers only `localhost`, `*.localhost`, IP addresses and the configured hosts.
 */
import assert from "node:assert/strict";
import type { Backends } from "../lib/dev/backend.ts";
import { devEvents } from "../lib/dev/events.ts";
import { devFront } from "../lib/dev/front.ts";
import { type RawRequest, requestBytes, send } from "./reliability/raw_http.ts";

const SOURCE_MAP = '{"version":3,"sourcesContent":["const secret = 1;"]}';

/** A dev server whose app cannot run (its error page shows stderr) and with one source map. */
function serveDev(hosts?: string[]) {
  const events = devEvents(() => ({ session: "s", version: 1, styles: 0 }));
  const backends = {
    current: () => Promise.resolve({ version: 1, title: "down", details: "stderr: /home/me/app" }),
  } as Backends;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    devFront({
      session: "s",
      token: "t",
      events,
      backends,
      asset: (path) =>
        Promise.resolve(
          path === "/_app/a.js.map" ? new TextEncoder().encode(SOURCE_MAP) : undefined,
        ),
      mapStack: (stack) => `mapped:${stack}`,
      stale: () => false,
      styleSwaps: () => 0,
      hosts,
    }),
  );
  const port = server.addr.port;
  return {
    port,
    request: (request: RawRequest) => send(port, requestBytes(port, request)),
    async [Symbol.asyncDispose]() {
      events.close();
      await server.shutdown();
    },
  };
}

Deno.test("dev: a DNS-rebinding Host reaches nothing of the dev server or the app", async () => {
  await using dev = serveDev();
  const host = `evil.example:${dev.port}`;
  const origin = `http://${host}`;
  const requests = [
    { target: "/_app/a.js.map" },
    { target: "/" },
    {
      method: "POST",
      target: "/_dev/stack",
      headers: [["Origin", origin], ["Content-Type", "text/plain"]] as [string, string][],
      body: "Error: x",
    },
  ];
  for (const request of requests) {
    const res = await dev.request({ ...request, host });
    assert.equal(res.status, 400, `${request.target}: ${res.body}`);
    assert.match(res.body, /ALLOWED_HOSTS/);
    assert.doesNotMatch(res.body, /secret|stderr|session/);
  }
  // The event stream never ends: its first bytes say whether it was refused.
  assert.match(await firstLine(dev.port, "/_dev/events", host), /^HTTP\/1.1 400 /);
  // Names that only look like loopback are DNS names too.
  for (const other of ["127.0.0.1.evil.example", "localhost.evil.example", "1.2.3.4x"]) {
    const res = await dev.request({ target: "/_app/a.js.map", host: `${other}:${dev.port}` });
    assert.equal(res.status, 400, other);
  }
});

Deno.test("dev: localhost, *.localhost, IP addresses and the configured hosts are answered", async () => {
  await using dev = serveDev(["box.lan:4444"]);
  const hosts = [
    `localhost:${dev.port}`,
    `LOCALHOST:${dev.port}`,
    `app.localhost:${dev.port}`,
    `127.0.0.1:${dev.port}`,
    `192.168.1.20:${dev.port}`,
    `[::1]:${dev.port}`,
    "box.lan:4444",
  ];
  for (const host of hosts) {
    const res = await dev.request({ target: "/_app/a.js.map", host });
    assert.equal(res.status, 200, host);
    assert.equal(res.body, SOURCE_MAP);
  }
  const page = await dev.request({ target: "/", host: `localhost:${dev.port}` });
  assert.match(page.body, /stderr: \/home\/me\/app/);
  // A configured host at another port is another host.
  const other = await dev.request({ target: "/_app/a.js.map", host: "box.lan:5555" });
  assert.equal(other.status, 400);
});

/** The status line of the answer to a GET of `target` for `host`, read from its first bytes. */
async function firstLine(port: number, target: string, host: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(requestBytes(port, { target, host })));
    const buffer = new Uint8Array(1024);
    const n = await conn.read(buffer);
    return new TextDecoder().decode(buffer.subarray(0, n ?? 0)).split("\r\n")[0];
  } finally {
    conn.close();
  }
}
