/**
 * Issue 11, findings 7 and 8: responses the pipeline must take as they come. `HEAD` with a
 * matching `If-None-Match` on a static file or a `/_app/` asset answers 304 with GET's headers
 * and no body (it was a bare 500), and `HEAD` of a handler's 204 stays a 204. A handler may return
 * a Response whose headers cannot change — `Response.redirect(…)`, or one straight from `fetch()`
 * — and still gets the security headers and `X-Request-Id` (it was a 500, "headers are
 * immutable").
 */
import assert from "node:assert/strict";
import type { TestServer } from "../helpers/server.ts";
import { requestBytes, send } from "./raw_http.ts";
import { builtTarget, startTarget } from "./target.ts";

const FILES = {
  "routes/api/empty.ts": `
    export const handler = {
      GET() {
        return new Response(null, { status: 204, headers: { "X-Empty": "yes" } });
      },
    };
  `,
  "routes/api/moved.ts": `
    export const handler = {
      GET(req: Request) {
        return Response.redirect(new URL("/about", req.url), 302);
      },
    };
  `,
  "routes/api/proxied.ts": `
    export const handler = {
      GET() {
        return fetch(Deno.env.get("UPSTREAM")!);
      },
    };
  `,
};

/** Headers every answer of ours carries, whatever made the Response. */
function assertOurHeaders(headers: Headers, what: string) {
  assert.match(headers.get("x-request-id") ?? "", /^[\w-]{8,}$/, `${what}: X-Request-Id`);
  assert.match(headers.get("content-security-policy") ?? "", /default-src 'self'/, `${what}: CSP`);
  assert.equal(headers.get("x-content-type-options"), "nosniff", `${what}: nosniff`);
  assert.ok(headers.get("referrer-policy"), `${what}: Referrer-Policy`);
}

/** Headers that differ between two answers to the same request. */
const PER_REQUEST = new Set(["date", "x-request-id", "content-security-policy"]);

function stable(headers: Headers): [string, string][] {
  return [...headers].filter(([name]) => !PER_REQUEST.has(name));
}

/** `HEAD` and `GET` with `If-None-Match`, over raw TCP: what comes back, body bytes included. */
async function revalidated(server: TestServer, path: string) {
  const first = await server.fetch(path);
  await first.body?.cancel();
  assert.equal(first.status, 200, path);
  const tag = first.headers.get("etag");
  assert.ok(tag, `${path} has an ETag`);
  const ask = (method: string) =>
    send(
      server.port,
      requestBytes(server.port, { method, target: path, headers: [["If-None-Match", tag]] }),
    );
  return { get: await ask("GET"), head: await ask("HEAD") };
}

/** An asset the build made, from a page with an island. */
async function assetPath(server: TestServer): Promise<string> {
  const html = await (await server.fetch("/counter")).text();
  const path = /["'](\/_app\/[^"']+\.js)["']/.exec(html)?.[1];
  assert.ok(path, "the counter page loads an asset from /_app/");
  return path;
}

Deno.test("findings 7 and 8: HEAD, 304 and immutable responses", async (t) => {
  const upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("from upstream", { headers: { "X-Upstream": "1" } }),
  );
  const built = await builtTarget(FILES);
  await using server = await startTarget(
    { UPSTREAM: `http://127.0.0.1:${upstream.addr.port}/` },
    { root: built.root },
  );
  try {
    for (const path of ["/favicon.svg", await assetPath(server)]) {
      await t.step(`HEAD ${path} with a matching If-None-Match: GET's 304, no body`, async () => {
        const { get, head } = await revalidated(server, path);
        assert.equal(get.status, 304);
        assert.equal(head.status, 304);
        assert.equal(head.body, "");
        assert.deepEqual(stable(head.headers), stable(get.headers));
        assertOurHeaders(head.headers, `HEAD ${path}`);
      });
    }

    await t.step("HEAD of a handler's 204: 204, no body", async () => {
      const res = await send(
        server.port,
        requestBytes(server.port, { method: "HEAD", target: "/api/empty" }),
      );
      assert.equal(res.status, 204);
      assert.equal(res.body, "");
      assert.equal(res.headers.get("x-empty"), "yes");
      assertOurHeaders(res.headers, "HEAD /api/empty");
    });

    await t.step("a handler returning Response.redirect(…)", async () => {
      for (const method of ["GET", "HEAD"]) {
        const res = await server.fetch("/api/moved", { method });
        await res.body?.cancel();
        assert.equal(res.status, 302, method);
        assert.equal(res.headers.get("location"), `${server.origin}/about`);
        assertOurHeaders(res.headers, `${method} /api/moved`);
      }
    });

    await t.step("a handler returning fetch()'s Response", async () => {
      const res = await server.fetch("/api/proxied");
      assert.equal(res.status, 200);
      assert.equal(await res.text(), "from upstream");
      assert.equal(res.headers.get("x-upstream"), "1");
      assertOurHeaders(res.headers, "GET /api/proxied");
    });

    const errors = server.logs().filter((line) => line.level === "error");
    assert.deepEqual(errors, [], "no failure was logged");
  } finally {
    await upstream.shutdown();
  }
});
