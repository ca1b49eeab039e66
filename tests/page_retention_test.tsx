/**
 * What a page's response keeps alive while its body waits to be sent. React's render (the body
 * stream's source) holds its `onError` until the body is read to the end; a request's context
 * reachable from there lives as long as every page still being written, and under load is promoted
 * and waits for a full collection (docs/performance.md).
 */
import assert from "node:assert/strict";
import type { Context, Next } from "hono";
import { Suspense, use } from "react";
import { captureLogs } from "shell/testing";
import { memoryApp } from "./helpers/app.ts";
import { heapAfterGc } from "./helpers/heap.ts";

Deno.test("a page rendered whole at its shell lets go of its request's context before its body is read", async () => {
  let collected = 0;
  const contexts = new FinalizationRegistry<void>(() => collected++);
  const app = memoryApp({
    routes: {
      "_middleware.ts": {
        handler: (c: Context, next: Next) => {
          contexts.register(c, undefined);
          return next();
        },
      },
      "page.tsx": { default: () => <p>Nothing is left to render after the shell.</p> },
    },
  });
  const unread: Response[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await app.fetch(new Request("http://localhost/page"));
    assert.equal(res.status, 200);
    unread.push(res);
  }
  await heapAfterGc();
  // Finalizers run in tasks of their own, after the collection.
  for (let turn = 0; turn < 10 && collected < unread.length; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  assert.equal(collected, unread.length, "contexts still reachable from unsent pages");
  for (const res of unread) assert.match(await res.text(), /Nothing is left to render/);
  await app.close();
});

/**
 * Letting go (`failing` cleared at `complete` or once `allReady` settles) must not drop a failure
 * that comes while the page still streams: React reports every failed or abandoned boundary to
 * `onError` before the last pending task ends, and `allReady` resolves only then.
 */
const streamingPage = (late: Promise<string>, early: Promise<string>) => {
  const Shown = ({ of }: { of: Promise<string> }) => <p>{use(of)}</p>;
  return {
    default: () => (
      <>
        <h1>Shell</h1>
        <Suspense fallback={<p>early…</p>}>
          <Shown of={early} />
        </Suspense>
        <Suspense fallback={<p>late…</p>}>
          <Shown of={late} />
        </Suspense>
      </>
    ),
  };
};

/** Reads `res` until `text` has come, then the rest; the whole body. */
async function readPast(res: Response, text: string, then: () => void): Promise<string> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let body = "";
  while (!body.includes(text)) {
    const { value, done } = await reader.read();
    assert.ok(!done, `the body ended before ${text}`);
    body += value;
  }
  then();
  for (let next = await reader.read(); !next.done; next = await reader.read()) body += next.value;
  return body;
}

Deno.test("a boundary failing after another one streamed in is still the page's failure", async () => {
  using logs = captureLogs();
  const early = Promise.withResolvers<string>();
  const late = Promise.withResolvers<string>();
  const app = memoryApp({ routes: { "page.tsx": streamingPage(late.promise, early.promise) } });
  const res = await app.request("/page");
  assert.equal(res.status, 200);
  early.resolve("streamed in");
  const body = await readPast(res, "streamed in", () => late.reject(new Error("late data broke")));
  const [line, ...more] = logs.lines.filter((l) => l.level === "error");
  assert.deepEqual(more, []);
  assert.equal(line.error.message, "late data broke");
  assert.match(body, new RegExp(`Digest: \\\\u003ccode>${line.digest}\\\\u003c/code>`));
  await app.close();
});

Deno.test("a deadline passing while the page streams is the page's failure", async () => {
  using logs = captureLogs();
  // A server's listener keeps its process up for the deadline, whose own timer never does.
  const serving = setInterval(() => {}, 1_000);
  using _serving = { [Symbol.dispose]: () => clearInterval(serving) };
  const early = Promise.withResolvers<string>();
  const never = new Promise<string>(() => {});
  const app = memoryApp({ routes: { "page.tsx": streamingPage(never, early.promise) } }, {
    requestTimeoutMs: 100,
  });
  const res = await app.request("/page");
  assert.equal(res.status, 200);
  // One boundary done, the other waiting for ever: the streaming deadline ends it.
  const body = await readPast(res, "<h1>Shell</h1>", () => early.resolve("streamed in"));
  const [line, ...more] = logs.lines.filter((l) => l.level === "error");
  assert.deepEqual(more, []);
  assert.equal(line.error.name, "DeadlineExceeded");
  assert.match(body, new RegExp(`Digest: \\\\u003ccode>${line.digest}\\\\u003c/code>`));
  await app.close();
});
