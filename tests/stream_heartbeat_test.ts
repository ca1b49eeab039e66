/**
 * @module
 * Idle event streams carry a comment every `heartbeatMs` from one timer per period, not one each:
 * a timer of its own per stream held the stream's closure (its request's context, its source) from
 * the process's timer table and cost each of thousands of open streams a timer, a closure and a
 * chunk per beat (attack 12: an open stream held some 78 KB of RSS). Over real HTTP: every stream
 * gets its pings, one interval beats them all, and it is cleared with the last stream (the test's
 * sanitizer would report it otherwise).
 */
import assert from "node:assert/strict";
import { serveApp } from "./helpers/app.ts";
import { eventStreamApp } from "./helpers/events.ts";

const STREAMS = 20;

Deno.test("20 idle event streams: each gets its heartbeats, all from one interval", async () => {
  // A source that never yields: the stream stays idle until the client leaves.
  const app = eventStreamApp((signal) => ({
    [Symbol.asyncIterator]: () => ({
      next: () =>
        new Promise((resolve) =>
          signal.addEventListener("abort", () => resolve({ done: true, value: undefined }))
        ),
    }),
  }), { heartbeatMs: 20 });
  await using served = serveApp(app);
  const started = setInterval;
  let intervals = 0;
  globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
    intervals++;
    return started(...args);
  }) as typeof setInterval;
  const controllers: AbortController[] = [];
  try {
    const texts = await Promise.all(Array.from({ length: STREAMS }, async () => {
      const controller = new AbortController();
      controllers.push(controller);
      const res = await served.fetch("/events", { signal: controller.signal });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      // Two beats each: the stream keeps beating after its first.
      for (let i = 0; i < 1000 && text.split(": ping").length < 3; i++) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      return text;
    }));
    for (const text of texts) {
      assert.match(text, /^retry: 1000\n\nevent: app-build\ndata: [^\n]+\n\n(: ping\n\n){2}/);
    }
    assert.equal(intervals, 1, "one interval for every stream of the period");
  } finally {
    globalThis.setInterval = started;
    for (const controller of controllers) controller.abort();
  }
  await app.close();
});
