/**
 * @module
 * Response compression (`lib/server/compression.ts`): which coding `Accept-Encoding` gets, odd and
 * hostile values included; what is never compressed; `Vary` kept; and, over a real connection,
 * that a compressed page still streams — its shell's compressed bytes leave and decompress before
 * a Suspense boundary is released — and that a client that never reads holds the source back.
 */
import assert from "node:assert/strict";
import { Suspense, use } from "react";
import { negotiateEncoding } from "../lib/server/compression.ts";
import type { Handlers } from "../lib/mod.ts";
import { fixtureApp, memoryApp, serveApp } from "./helpers/app.ts";
import { within } from "./helpers/wait.ts";

const BIG = "<p>" + "a page long enough to be worth compressing. ".repeat(100) + "</p>";

Deno.test("negotiateEncoding: the client's preference by q-value, gzip on a tie", () => {
  const cases: [string | null, string | undefined][] = [
    // Browsers take both at q=1: gzip, half brotli's CPU for a little more bytes.
    ["gzip, deflate, br, zstd", "gzip"], // Chromium
    ["gzip, deflate, br", "gzip"], // Firefox, Safari
    ["br", "br"],
    ["br, gzip;q=0.9", "br"],
    ["gzip", "gzip"],
    ["GZIP", "gzip"],
    ["x-gzip", "gzip"],
    ["br;q=0.5, gzip", "gzip"],
    ["br;q=1.0, gzip;q=0.999", "br"],
    ["gzip;q=0.5, br;q=0.5", "gzip"],
    ["*", "gzip"],
    ["*;q=0.1, gzip;q=0.2", "gzip"],
    ["br;q=0, *", "gzip"],
    ["gzip;Q=0, br;q=0", undefined],
    ["gzip, gzip;q=0", undefined], // said twice: the lower q wins
    ["*;q=0", undefined],
    ["*;q=0, identity", undefined],
    ["identity", undefined],
    ["identity;q=1, gzip;q=0.5", undefined], // the client prefers the body as it is
    ["gzip;q=0.5, identity;q=0.1", "gzip"],
    ["deflate, zstd", undefined], // nothing we make
    ["", undefined],
    [null, undefined],
    // q-values that are not q-values count as 0, never as 1.
    ["gzip;q=abc", undefined],
    ["gzip;q=1.5", undefined],
    ["gzip;q=-1", undefined],
    ["gzip;q=0.0001", undefined],
    ["gzip;q=NaN", undefined],
    ["gzip;q=", undefined],
    ["gzip;q", undefined],
    ["br;q=abc, gzip", "gzip"],
    // Other parameters, spaces and empty entries are no trouble.
    ["  br ; level=9 ; q=0.8 ,, gzip;q=0.7 ", "br"],
    ["BR;Q=1, gzip;q=0.5", "br"],
    [",,,;;;===", undefined],
    // Longer than any client's: the body as it is, without reading it.
    ["gzip, " + "x".repeat(300), undefined],
    ["br," + " ".repeat(1_000_000), undefined],
  ];
  for (const [header, expected] of cases) {
    assert.equal(negotiateEncoding(header), expected, `Accept-Encoding: ${header?.slice(0, 60)}`);
  }
});

Deno.test("pages and JSON are compressed as asked, and decompress to the page", async (t) => {
  const app = await fixtureApp();
  for (
    const [accept, coding] of [["br, gzip;q=0.5", "br"], [
      "gzip, deflate, br, zstd",
      "gzip",
    ]] as const
  ) {
    await t.step(`${accept}: ${coding}`, async () => {
      const res = await app.request("/list", { headers: { "Accept-Encoding": accept } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("Content-Encoding"), coding);
      assert.equal(res.headers.get("Content-Length"), null);
      assert.match(res.headers.get("Vary") ?? "", /Accept-Encoding/);
      const compressed = new Uint8Array(await res.arrayBuffer());
      const html = await decompress(compressed, coding);
      assert.ok(html.startsWith("<!DOCTYPE html>"));
      assert.ok(html.includes("Row <strong>100</strong>") && html.trimEnd().endsWith("</html>"));
      assert.ok(compressed.length * 4 < html.length, `${compressed.length} of ${html.length}`);
    });
  }
  await t.step("no Accept-Encoding, identity, or q=0: as it is, with Vary", async () => {
    for (const accept of [undefined, "identity", "gzip;q=0, br;q=0", "br;q=wat"]) {
      const headers: HeadersInit = accept ? { "Accept-Encoding": accept } : {};
      const res = await app.request("/list", { headers });
      assert.equal(res.headers.get("Content-Encoding"), null, String(accept));
      assert.equal(res.headers.get("Vary"), "Accept-Encoding");
      assert.ok((await res.text()).includes("Row <strong>100</strong>"));
    }
  });
  await t.step("an Accept-Encoding of 1 MB: the page as it is, at once", async () => {
    const res = await app.request("/list", {
      headers: { "Accept-Encoding": "gzip;q=0.5, ".repeat(90_000) + "br" },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Content-Encoding"), null);
    await res.body?.cancel();
  });
  await t.step("an API route's JSON", async () => {
    const res = await app.request("/api/time", { headers: { "Accept-Encoding": "gzip" } });
    assert.equal(res.headers.get("Content-Encoding"), "gzip");
    const json = JSON.parse(await decompress(new Uint8Array(await res.arrayBuffer()), "gzip"));
    assert.ok(typeof json.now === "string");
  });
  await t.step("the not-found page", async () => {
    const res = await app.request("/nowhere", { headers: { "Accept-Encoding": "br" } });
    assert.equal(res.status, 404);
    assert.equal(res.headers.get("Content-Encoding"), "br");
    await res.body?.cancel();
  });
  await t.step("HEAD: no coding, no body, GET's Vary", async () => {
    const res = await app.fetch(
      new Request("http://localhost/list", {
        method: "HEAD",
        headers: { "Accept-Encoding": "br" },
      }),
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Content-Encoding"), null);
    assert.equal(res.headers.get("Vary"), "Accept-Encoding");
    assert.equal(await res.text(), "");
  });
  await t.step("an event stream: never compressed, its first bytes out at once", async () => {
    const res = await app.request("/wall/events", { headers: { "Accept-Encoding": "gzip, br" } });
    assert.equal(res.headers.get("Content-Encoding"), null);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const first = await within(reader.read(), 5_000, "the stream's first event");
    assert.match(first.value ?? "", /^retry: /);
    await reader.cancel();
  });
  await t.step("the build's assets keep their precompressed copies", async () => {
    const { manifest } = await import("./helpers/app.ts").then((m) => m.fixtureBuild());
    const res = await app.request(manifest.assets.boot.entry, {
      headers: { "Accept-Encoding": "br" },
    });
    assert.equal(res.headers.get("Content-Encoding"), "br");
    const raw = await app.request(manifest.assets.boot.entry);
    const body = await decompress(new Uint8Array(await res.arrayBuffer()), "br");
    assert.equal(body, await raw.text(), "compressed once, by the build, not twice");
  });
  app.close();
});

Deno.test("what is never compressed, and what other middleware set is kept", async (t) => {
  const respond = (init: ResponseInit, body: BodyInit | null = BIG) => ({
    handler: { GET: () => new Response(body, init) } satisfies Handlers,
  });
  const html = { "Content-Type": "text/html; charset=utf-8" };
  const app = memoryApp({
    routes: {
      "small.ts": respond({ headers: { ...html, "Content-Length": "20" } }, "<p>twenty bytes.</p>"),
      "sized.ts": respond({ headers: { ...html, "Content-Length": String(BIG.length) } }),
      "encoded.ts": respond({ headers: { ...html, "Content-Encoding": "gzip" } }),
      "no-transform.ts": respond({ headers: { ...html, "Cache-Control": "no-transform" } }),
      "image.ts": respond({ headers: { "Content-Type": "image/png" } }),
      // (A string body would be typed text/plain by `Response` itself.)
      "untyped.ts": respond({ headers: {} }, new Blob([BIG]).stream()),
      "not-modified.ts": respond({ status: 304, headers: html }, null),
      "empty.ts": respond({ status: 204, headers: html }, null),
      "vary.ts": respond({ headers: { ...html, Vary: "Cookie", ETag: '"v1"' } }),
      "vary-all.ts": respond({ headers: { ...html, Vary: "*" } }),
      "vary-already.ts": respond({ headers: { ...html, Vary: "accept-encoding, Cookie" } }),
    },
  });
  const get = (path: string) =>
    app.request(path, { headers: { "Accept-Encoding": "br, gzip;q=0.5" } });
  for (const path of ["/small", "/encoded", "/no-transform", "/image", "/untyped"]) {
    await t.step(path, async () => {
      const res = await get(path);
      assert.equal(res.status, 200);
      const encoding = path === "/encoded" ? "gzip" : null;
      assert.equal(res.headers.get("Content-Encoding"), encoding);
      assert.equal(res.headers.get("Vary"), null);
      await res.body?.cancel();
    });
  }
  await t.step("a body of known length past the threshold is compressed", async () => {
    const res = await get("/sized");
    assert.equal(res.headers.get("Content-Encoding"), "br");
    assert.equal(res.headers.get("Content-Length"), null);
    assert.equal(await decompress(new Uint8Array(await res.arrayBuffer()), "br"), BIG);
  });
  await t.step("204 and 304", async () => {
    for (const path of ["/not-modified", "/empty"]) {
      const res = await get(path);
      assert.equal(res.headers.get("Content-Encoding"), null, path);
      assert.equal(res.body, null);
    }
  });
  await t.step("Vary: others' values kept; a strong ETag becomes weak", async () => {
    const res = await get("/vary");
    assert.equal(res.headers.get("Vary"), "Cookie, Accept-Encoding");
    assert.equal(res.headers.get("ETag"), 'W/"v1"');
    await res.body?.cancel();
    const all = await get("/vary-all");
    assert.equal(all.headers.get("Vary"), "*");
    await all.body?.cancel();
    const already = await get("/vary-already");
    assert.equal(already.headers.get("Vary"), "accept-encoding, Cookie");
    await already.body?.cancel();
  });
  app.close();
});

Deno.test("compress: false (a proxy compresses): nothing is, nor varies", async () => {
  const app = await fixtureApp({ compress: false });
  const res = await app.request("/list", { headers: { "Accept-Encoding": "br, gzip" } });
  assert.equal(res.headers.get("Content-Encoding"), null);
  assert.equal(res.headers.get("Vary"), null);
  await res.body?.cancel();
  app.close();
});

Deno.test("over HTTP, a compressed page's shell decompresses before its Suspense part is released", async (t) => {
  for (const coding of ["br", "gzip"] as const) {
    await t.step(coding, async () => {
      const release = Promise.withResolvers<string>();
      const Late = () => <p>{use(release.promise)}</p>;
      const app = memoryApp({
        routes: {
          "index.tsx": {
            default: () => (
              <main>
                <h1>The shell</h1>
                <Suspense fallback={<p>Waiting…</p>}>
                  <Late />
                </Suspense>
              </main>
            ),
          },
        },
      });
      await using server = serveApp(app);
      await using http = await rawRequest(server.port, "/", { "Accept-Encoding": coding });
      assert.match(http.head, /^HTTP\/1\.1 200/);
      assert.match(http.head, new RegExp(`\r\ncontent-encoding: ${coding}\r\n`, "i"));
      assert.match(http.head, /\r\ntransfer-encoding: chunked\r\n/i);
      const inflate = new DecompressionStream(
        coding === "br" ? "brotli" as CompressionFormat : "gzip",
      );
      const writer = inflate.writable.getWriter();
      const text = inflate.readable.pipeThrough(new TextDecoderStream()).getReader();
      let shown = "";
      // Chunk by chunk as they cross the wire, until the shell can be read from what came.
      while (!shown.includes("Waiting…")) {
        const chunk = await within(http.nextChunk(), 5_000, "a chunk of the shell");
        assert.ok(chunk, "the response ended before its shell");
        writer.write(chunk);
        shown += (await within(text.read(), 5_000, "the chunk, decompressed")).value ?? "";
      }
      assert.ok(shown.includes("<h1>The shell</h1>"));
      assert.ok(!shown.includes("Released"));
      release.resolve("Released");
      for (let chunk = await http.nextChunk(); chunk; chunk = await http.nextChunk()) {
        writer.write(chunk);
      }
      writer.close();
      for (let next = await text.read(); !next.done; next = await text.read()) shown += next.value;
      assert.ok(shown.includes("<p>Released</p>") && shown.trimEnd().endsWith("</html>"));
      app.close();
    });
  }
});

Deno.test("a client that never reads a compressed response holds its source back, and leaving ends it", async () => {
  let pulls = 0;
  const cancelled = Promise.withResolvers<void>();
  const app = memoryApp({
    routes: {
      "endless.ts": {
        handler: {
          GET: () =>
            new Response(
              new ReadableStream({
                pull(controller) {
                  pulls++;
                  // Random text: it does not compress away to nothing.
                  const bytes = crypto.getRandomValues(new Uint8Array(12 * 1024));
                  controller.enqueue(new TextEncoder().encode(btoa(String.fromCharCode(...bytes))));
                },
                cancel: () => cancelled.resolve(),
              }),
              { headers: { "Content-Type": "text/plain" } },
            ),
        } satisfies Handlers,
      },
    },
  });
  await using server = serveApp(app);
  const http = await rawRequest(server.port, "/endless", { "Accept-Encoding": "gzip" });
  assert.match(http.head, /content-encoding: gzip/i);
  // Wait until the pulls stop: the socket's buffers and the streams' queues are full.
  let seen = -1;
  for (let i = 0; i < 100 && pulls !== seen; i++) {
    seen = pulls;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.equal(pulls, seen, "the source is still being read by nobody");
  // 16 KB a pull: a few megabytes of socket buffers, never the endless body.
  assert.ok(pulls < 1_000, `${pulls} pulls`);
  await http[Symbol.asyncDispose]();
  await within(cancelled.promise, 5_000, "the source to be cancelled once the client left");
  app.close();
});

Deno.test("a body of chunks that never add up (empty, or a byte each) is streamed, not gathered with the loop held", async () => {
  // Each chunk ready at once, in the same task: gathered for one compression call, they held the
  // event loop until the body ended - for ever, with empty chunks (200,000 took 12 s).
  const CHUNKS = 20_000;
  let pulls = 0;
  const app = memoryApp({
    routes: {
      "api/empty.ts": {
        handler: {
          GET: () =>
            new Response(
              new ReadableStream({
                pull(controller) {
                  if (++pulls > CHUNKS) controller.close();
                  else controller.enqueue(new Uint8Array(pulls % 2));
                },
              }),
              { headers: { "Content-Type": "text/plain" } },
            ),
        } satisfies Handlers,
      },
    },
  });
  const res = await app.request("http://localhost/api/empty", {
    headers: { "Accept-Encoding": "gzip" },
  });
  assert.equal(res.headers.get("content-encoding"), "gzip");
  assert.ok(pulls < 10_000, `the head came after ${pulls} chunks read`);
  const text = new TextDecoder().decode(
    new Uint8Array(
      await new Response(res.body!.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer(),
    ),
  );
  assert.equal(text.length, CHUNKS / 2, "every byte, once");
  app.close();
});

async function decompress(bytes: Uint8Array<ArrayBuffer>, coding: "br" | "gzip"): Promise<string> {
  const format = coding === "br" ? "brotli" as CompressionFormat : "gzip";
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream(format));
  return await new Response(stream).text();
}

/**
 * One HTTP/1.1 request over a TCP connection of its own, read as it arrives: the head, then the
 * body's chunks one by one as the server framed them (chunked transfer coding), undecoded.
 */
async function rawRequest(port: number, path: string, headers: Record<string, string>) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const lines = Object.entries({ Host: `127.0.0.1:${port}`, ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`).join("");
  await conn.write(new TextEncoder().encode(`GET ${path} HTTP/1.1\r\n${lines}\r\n`));
  const reader = conn.readable.getReader();
  let buffered: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  const more = async () => {
    const { value, done } = await reader.read();
    if (done) throw new Error("the connection closed");
    const joined = new Uint8Array(buffered.length + value.length);
    joined.set(buffered);
    joined.set(value, buffered.length);
    buffered = joined;
  };
  const indexOf = (text: string) => new TextDecoder("latin1").decode(buffered).indexOf(text);
  while (indexOf("\r\n\r\n") < 0) await more();
  const end = indexOf("\r\n\r\n");
  const head = new TextDecoder().decode(buffered.slice(0, end + 2));
  buffered = buffered.slice(end + 4);
  return {
    head,
    /** The next chunk of the body, or `undefined` at its end. */
    async nextChunk(): Promise<Uint8Array<ArrayBuffer> | undefined> {
      while (indexOf("\r\n") < 0) await more();
      const line = indexOf("\r\n");
      const size = parseInt(new TextDecoder().decode(buffered.slice(0, line)), 16);
      while (buffered.length < line + 2 + size + 2) await more();
      const chunk = buffered.slice(line + 2, line + 2 + size);
      buffered = buffered.slice(line + 2 + size + 2);
      return size === 0 ? undefined : chunk;
    },
    async [Symbol.asyncDispose]() {
      await reader.cancel().catch(() => {});
      try {
        conn.close();
      } catch { /* closed already */ }
    },
  };
}
