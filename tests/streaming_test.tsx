/**
 * @module
 * Streaming SSR, in-process: the shell with the Suspense fallback comes out of the response
 * before the suspended content, which then streams into the same response; and a client that
 * leaves while a page streams is no failure.
 */
import assert from "node:assert/strict";
import { Suspense, use } from "react";
import { renderPage } from "../lib/render/page.tsx";
import { fixtureApp } from "./helpers/app.ts";
import { within } from "./helpers/wait.ts";

const FALLBACK = "Waiting for the stream…";
const FORECAST = "Streamed in after the shell.";

Deno.test("a Suspense section streams in after the shell", async () => {
  const res = await (await fixtureApp()).request("/streaming");
  // The status and headers were decided before the forecast existed.
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");

  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const chunks: string[] = [];
  while (!chunks.join("").includes(FALLBACK)) {
    const { value, done } = await reader.read();
    assert.ok(!done, "the stream ended before the fallback");
    chunks.push(value);
  }
  const shell = chunks.join("");
  assert.ok(!shell.includes(FORECAST), "the section is not in the chunks that carry the shell");
  assert.ok(shell.includes("<h1>Streaming</h1>"));

  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    chunks.push(next.value);
  }
  const body = chunks.join("");
  assert.ok(body.includes(FORECAST), "the section arrives in the same response");
  assert.ok(body.indexOf("</main>") < body.indexOf(FORECAST), "it follows the shell");
  assert.ok(body.trimEnd().endsWith("</html>"));
});

/**
 * A page whose one boundary never resolves, rendered with `signal`: its response, the failures its
 * stream reported, and a promise of the render's own clock cleared (React done with the render).
 */
async function renderWaiting(signal: AbortSignal) {
  const failures: unknown[] = [];
  const renderDone = Promise.withResolvers<void>();
  const clock = {
    start: () => ({
      expiresAt: Infinity,
      ms: Infinity,
      onExpire() {},
      clear: () => renderDone.resolve(),
    }),
  };
  const later = new Promise<string>(() => {});
  const Waiting = () => <p>{use(later)}</p>;
  const res = await renderPage({
    layouts: [],
    page: () => (
      <Suspense fallback={<p>waiting</p>}>
        <Waiting />
      </Suspense>
    ),
  }, {
    context: { nonce: "n", assets: { boot: { entry: "", imports: [] }, islands: {} } },
    props: { data: undefined, params: {}, url: new URL("http://localhost/"), state: {} },
    status: 200,
    signal,
    clock,
    onStreamError: (error) => {
      failures.push(error);
      return { tail: "", stop: true };
    },
  });
  return { res, failures, renderDone: renderDone.promise };
}

Deno.test("a client that leaves while a page streams is no failure", async () => {
  // When a write fails, Deno cancels the body before the request's signal says the client left;
  // React then reports the boundaries still waiting, which must not count as failures. The
  // render's own clock is cleared once React is done with the render (aborted, here) and so has
  // reported every boundary it gave up.
  const { res, failures, renderDone } = await renderWaiting(new AbortController().signal);
  const reader = res.body!.getReader();
  await reader.read();
  await reader.cancel(new Error("resource closed"));
  await within(renderDone, 5_000, "the render to end once the body was cancelled");
  assert.deepEqual(failures, []);
});

Deno.test("the request's abort after the shell stops the render, and is no failure", async () => {
  // The watch forwards the request's abort to the render's own signal (lib/render/stream_failure.ts).
  const request = new AbortController();
  const { res, failures, renderDone } = await renderWaiting(request.signal);
  const reader = res.body!.getReader();
  await reader.read();
  request.abort(new Error("the client left"));
  await within(renderDone, 5_000, "the render to end once the request was aborted");
  await reader.cancel();
  assert.deepEqual(failures, []);
});

Deno.test("a page's render listens on the request's signal alone: React's listener stays off Deno's events", async () => {
  // The watch is the render's signal as much as React reads one (lib/render/stream_failure.ts): an
  // AbortController a request, and React's listener added to its signal and removed again by an
  // event, cost every page some 3 KB (docs/performance.md, perf37). The abort itself still
  // reaches React: the tests above.
  const listened: EventTarget[] = [];
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (this: EventTarget, ...args) {
    if (this instanceof AbortSignal) listened.push(this);
    return add.apply(this, args);
  };
  const request = new AbortController();
  try {
    const res = await renderPage({ layouts: [], page: () => <p>done</p> }, {
      context: { nonce: "n", assets: { boot: { entry: "", imports: [] }, islands: {} } },
      props: { data: undefined, params: {}, url: new URL("http://localhost/"), state: {} },
      status: 200,
      signal: request.signal,
      clock: { start: () => undefined },
      onStreamError: () => ({ tail: "", stop: true }),
    });
    assert.match(await res.text(), /<p>done<\/p>/);
  } finally {
    EventTarget.prototype.addEventListener = add;
  }
  // Which signals were listened on: the request's, and no other.
  assert.deepEqual(listened.map((signal) => signal === request.signal), [true]);
});
