/**
 * @module
 * Security, on the framework's test app from its real build: the CSP with a fresh nonce per request that
 * every script we emit carries and the other security headers (in-process), and path traversal
 * sent as raw bytes over a real connection (fetch would normalize `..`), never reaching a file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fixtureApp, fixtureBuild, serveApp } from "./helpers/app.ts";

function nonceOf(res: Response): string {
  const csp = res.headers.get("content-security-policy");
  assert.ok(csp, "a Content-Security-Policy header");
  const scriptSrc = csp.split(";").map((d) => d.trim()).find((d) => d.startsWith("script-src "));
  assert.ok(scriptSrc, `script-src in ${csp}`);
  const nonce = /'nonce-([A-Za-z0-9+/=_-]+)'/.exec(scriptSrc)?.[1];
  assert.ok(nonce, `a nonce in ${scriptSrc}`);
  assert.ok(!scriptSrc.includes("'unsafe-inline'"), "inline scripts need the nonce");
  return nonce;
}

/**
 * Text from the files a traversal would aim at (the 404 page echoes the path, so not names), each
 * checked to be in its file: a marker the file no longer holds would let a leak pass.
 */
const FILE_CONTENTS: [string, string][] = [
  ["deno.json", '"nodeModulesDir"'],
  ["main.ts", "appFromEnv(manifest)"],
  ["/etc/passwd", "root:x:0:"],
  ["lib/mod.ts", "@module"],
  ["_build/manifest.gen.ts", "import * as $"],
];

/** Sends `path` exactly as written (fetch would normalize `..`) and returns status and body. */
async function rawGet(port: number, path: string): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
  await conn.write(new TextEncoder().encode(request));
  const raw = new Uint8Array(await new Response(conn.readable).arrayBuffer());
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  const split = raw.findIndex((_, i) => raw.subarray(i, i + 4).join() === "13,10,13,10");
  const head = text(raw.subarray(0, split));
  let body: Uint8Array = raw.subarray(split + 4);
  if (/^transfer-encoding: chunked$/im.test(head)) body = unchunk(body);
  return { status: Number(head.split(" ")[1]), body: text(body) };
}

/** Decodes a chunked HTTP/1.1 body (sizes count bytes, hence bytes). */
function unchunk(bytes: Uint8Array): Uint8Array {
  const parts: number[] = [];
  for (let at = 0;;) {
    const eol = bytes.indexOf(0x0d, at);
    const size = parseInt(new TextDecoder().decode(bytes.subarray(at, eol)), 16);
    if (!size) return new Uint8Array(parts);
    parts.push(...bytes.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

const app = await fixtureApp();
/** The built copy the app serves from: where a traversal would find its files. */
const { root } = await fixtureBuild();

Deno.test("every script on a page carries the request's nonce", async () => {
  for (const path of ["/counter", "/streaming", "/", "/no-such-page"]) {
    const res = await app.request(path);
    const nonce = nonceOf(res);
    const html = await res.text();
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    for (const tag of scripts) {
      assert.deepEqual(tag.match(/ nonce="([^"]*)"/g), [` nonce="${nonce}"`], `${path}: ${tag}`);
    }
    if (path === "/counter" || path === "/streaming") {
      assert.ok(scripts.length > 0, `${path} has scripts to check`);
    }
  }
});

Deno.test("each request gets a new nonce", async () => {
  const nonces = new Set<string>();
  for (let i = 0; i < 5; i++) {
    const res = await app.request("/counter");
    const nonce = nonceOf(res);
    assert.ok((await res.text()).includes(`nonce="${nonce}"`));
    nonces.add(nonce);
  }
  assert.equal(nonces.size, 5);
});

Deno.test("pages, files, API and errors carry the security headers", async () => {
  for (const path of ["/", "/favicon.svg", "/api/time", "/no-such-page"]) {
    const res = await app.request(path);
    await res.body?.cancel();
    assert.equal(res.headers.get("x-content-type-options"), "nosniff", path);
    assert.equal(res.headers.get("referrer-policy"), "strict-origin-when-cross-origin", path);
    const csp = res.headers.get("content-security-policy") ?? "";
    // Framing is the CSP's to forbid (`frame-ancestors`); X-Frame-Options would only repeat it.
    assert.match(csp, /frame-ancestors 'self'/, path);
    assert.match(csp, /object-src 'none'/, path);
    assert.equal(res.headers.get("cross-origin-opener-policy"), "same-origin", path);
    assert.equal(res.headers.get("cross-origin-resource-policy"), "same-origin", path);
  }
});

Deno.test("a sane request id from a client or proxy is kept, any other replaced", async () => {
  const idOf = async (sent?: string) => {
    const res = await app.request("/api/time", sent ? { headers: { "X-Request-Id": sent } } : {});
    await res.body?.cancel();
    return res.headers.get("x-request-id");
  };
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  assert.equal(await idOf("lb-7f3a_91=="), "lb-7f3a_91==");
  assert.equal(await idOf("x".repeat(255)), "x".repeat(255));
  for (const insane of [undefined, "x".repeat(256), "a b", "<script>", "id\u00e9"]) {
    const id = await idOf(insane);
    assert.match(id ?? "", uuid, `${insane?.slice(0, 20)} → ${id}`);
  }
  assert.notEqual(await idOf(), await idOf(), "a new id for each request");
});

Deno.test("path traversal never returns a file outside static/ and _build/static/", async () => {
  for (const [file, marker] of FILE_CONTENTS) {
    const path = file.startsWith("/") ? file : join(root, file);
    assert.ok((await Deno.readTextFile(path)).includes(marker), `${file} holds ${marker}`);
  }
  await using server = serveApp(await fixtureApp());
  const paths = [
    "/../deno.json",
    "/../../etc/passwd",
    "/%2e%2e/deno.json",
    "/%2E%2E%2Fmain.ts",
    "/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/_app/../deno.json",
    "/_app/..%2f..%2fdeno.json",
    "/_app/%2e%2e/manifest.gen.ts",
    "/_app/..%2fmanifest.gen.ts",
    "/static/../main.ts",
    "/static/favicon.svg",
    "/%252e%252e/deno.json",
    "/%252e%252e%252fmain.ts",
    "/..\\deno.json",
    "/..%5cdeno.json",
    "/%5c..%5cmain.ts",
    "/favicon.svg%00",
    "/favicon.svg%00.js",
    "/%00../deno.json",
    "//etc/passwd",
    "/main.ts",
    "/deno.json",
    "/lib/mod.ts",
    "/_build/manifest.gen.ts",
  ];
  for (const path of paths) {
    const { status, body } = await rawGet(server.port, path);
    assert.ok(status >= 400 && status < 500, `${path} → ${status}`);
    for (const [file, marker] of FILE_CONTENTS) {
      assert.ok(!body.includes(marker), `${path} leaked ${file}`);
    }
  }
  // The same requests do work for a file that is served, so the check above can fail.
  const served = await rawGet(server.port, "/favicon.svg");
  assert.equal(served.status, 200);
  assert.ok(served.body.length > 0);
});
