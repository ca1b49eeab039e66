/**
 * @module
 * The failure screen's exact wording, its HTML, and digests.
 */
import assert from "node:assert/strict";
import { describe, digestOf } from "../lib/errors/digest.ts";
import {
  clientErrorMessage,
  screenDocument,
  screenMarkup,
  serverErrorMessage,
} from "../lib/errors/screen.ts";

Deno.test("both messages, word for word", () => {
  assert.equal(
    clientErrorMessage("shop.example.com"),
    "Application error: a client-side exception has occurred while loading shop.example.com (see the browser console for more information).",
  );
  assert.equal(
    serverErrorMessage("shop.example.com"),
    "Application error: a server-side exception has occurred while loading shop.example.com (see the server logs for more information).",
  );
});

Deno.test("the server screen carries the digest; the client screen has none", () => {
  const server = screenDocument({ host: "example.com", digest: "7KQ2M-XF9PA" });
  assert.ok(server.startsWith("<!DOCTYPE html>"));
  assert.ok(server.includes(`<h1>${serverErrorMessage("example.com")}</h1>`));
  assert.ok(server.includes("<p>Digest: <code>7KQ2M-XF9PA</code></p>"));
  assert.ok(!server.includes("<pre>"), "no details unless given (dev only)");

  const client = screenMarkup({ host: "example.com" });
  assert.ok(client.includes(`<h1>${clientErrorMessage("example.com")}</h1>`));
  assert.ok(!client.includes("Digest"));
});

Deno.test("the screen needs nothing from outside: no link, script or external url", () => {
  const html = screenDocument({ host: "example.com", digest: "7KQ2M-XF9PA", nonce: "abc" });
  assert.ok(!/<link|<script|<img|url\(|@import|https?:/.test(html));
  assert.ok(html.includes('<style nonce="abc">'));
  assert.ok(html.includes("prefers-color-scheme:dark"), "a dark variant");
});

Deno.test("a hostile host, digest or detail is escaped", () => {
  const hostile = `"><script>alert(1)</script><img src=x onerror=alert(2)>`;
  const html = screenDocument({ host: hostile, digest: hostile, details: hostile, nonce: hostile });
  assert.ok(!html.includes("<script"));
  assert.ok(!html.includes("<img"));
  assert.ok(html.includes("&lt;script&gt;alert(1)&lt;/script&gt;"));
  assert.ok(html.includes('nonce="&quot;&gt;'));
});

Deno.test("a digest is short, readable aloud and the same for the same error", () => {
  // Thrown twice from the same place: the same message and stack.
  const [a, b] = [1, 2].map(() => new Error("the same failure"));
  assert.equal(digestOf(a), digestOf(b));
  assert.match(digestOf(a), /^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/);
  assert.notEqual(digestOf(new Error("another failure")), digestOf(a));
  assert.equal(digestOf("plain string"), digestOf("plain string"));
  assert.notEqual(digestOf("plain string"), digestOf("other string"));
});

Deno.test("describe names anything thrown", () => {
  const error = new TypeError("bad type");
  assert.deepEqual(describe(error), { name: "TypeError", message: "bad type", stack: error.stack });
  assert.deepEqual(describe("oops"), { name: "NonError", message: "oops", stack: "" });
  assert.deepEqual(describe({ code: 42 }), { name: "NonError", message: '{"code":42}', stack: "" });
  assert.equal(describe(undefined).message, "undefined");
  assert.equal(describe(null).message, "null");
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.equal(describe(cyclic).message, "[object Object]");
  assert.equal(describe(Symbol("s")).message, "Symbol(s)");
});

Deno.test("a digest does not depend on the way a request reached the code, nor on the folder", () => {
  const root = new URL("../", import.meta.url).href;
  const thrown = (lines: string[]) => {
    const error = new Error("the page broke");
    error.stack = ["Error: the page broke", ...lines.map((line) => `    at ${line}`)].join("\n");
    return error;
  };
  const app = [`GET (${root}routes/ops/boom.tsx:3:11)`, `Page (${root}routes/ops/boom.tsx:9:2)`];
  // `deno task start`, Deno's OpenTelemetry on: Hono's dispatch and the framework's steps.
  const start = thrown([
    ...app,
    `${root}lib/server/routes.ts:93:31`,
    `dispatch (${root}node_modules/.deno/hono@4.13.19/node_modules/hono/dist/compose.js:35:17)`,
    `restoreFormState (${root}lib/actions/form_state.ts:173:14)`,
  ]);
  // `deno serve`, the Sentry SDK's own tracing: a middleware frame more, Deno's own frames.
  const serve = thrown([
    ...app,
    `${root}lib/server/routes.ts:93:31`,
    `${root}lib/sentry/middleware.ts:88:19`,
    `async Promise.all (index 0)`,
    `ext:deno_http/00_serve.ts:410:24`,
  ]);
  assert.equal(digestOf(serve), digestOf(start));
  assert.notEqual(digestOf(thrown(app.slice(1))), digestOf(start), "another place, another bug");
  // Only the path under the project counts: a clone or a blue/green folder elsewhere (whose
  // frames name its own root) gets the digest of the same frames with no root at all.
  const relative = thrown(app.map((line) => line.replaceAll(root, "")));
  assert.equal(digestOf(relative), digestOf(start));
  // Thrown inside the framework (no frame of the app's): its first frame places it.
  const inLib = (line: number) =>
    thrown([`expire (${root}lib/server/deadline.ts:${line}:19)`, `ext:core/02_timers.js:307:17`]);
  assert.equal(digestOf(inLib(97)), digestOf(inLib(97)));
  assert.notEqual(digestOf(inLib(97)), digestOf(inLib(98)));
});

/** What a `fetch` with `AbortSignal.timeout` rejects with: made in Deno's timer, no frame of ours. */
async function timeoutError(): Promise<unknown> {
  const signal = AbortSignal.timeout(1);
  await new Promise((resolve) => signal.addEventListener("abort", resolve));
  return signal.reason;
}

Deno.test("a failure with no frame of the app's is placed by the part of the app that failed", async () => {
  const timedOut = await timeoutError();
  assert.doesNotMatch(String((timedOut as Error).stack), /errors_test/, "Deno's frames only");
  assert.equal(digestOf(timedOut, "/rates"), digestOf(await timeoutError(), "/rates"));
  assert.notEqual(digestOf(timedOut, "/rates"), digestOf(timedOut, "/payments"));
  assert.notEqual(
    digestOf(timedOut, "routes/_pay/actions.ts#pay"),
    digestOf(timedOut, "routes/_pay/actions.ts#refund"),
  );
  // The app's own frames still name the place: one bug of its code keeps one digest everywhere.
  const own = new Error("the page broke");
  assert.equal(digestOf(own, "/rates"), digestOf(own, "/payments"));
});
