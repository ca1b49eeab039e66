/**
 * @module
 * The render's watch over its Suspense boundaries (lib/render/stream_failure.ts) lets go of the
 * request once React has nothing left to render: Deno aborts every request's signal when its
 * response is sent, and forwarding that to a render long done cost an event and an abort on every
 * request (docs/performance.md). While React still renders, the request's abort still stops it.
 */
import assert from "node:assert/strict";
import { watchBoundaries } from "../lib/render/stream_failure.ts";
import { deadlineClock } from "../lib/server/deadline.ts";

const clock = deadlineClock(0);
const neverFails = () => ({ tail: "", stop: false });

Deno.test("a render with nothing left to render no longer follows its request's signal", () => {
  const request = new AbortController();
  const watch = watchBoundaries(request.signal, neverFails, undefined, clock);
  assert.equal(watch.shellReady(true, Promise.resolve()), undefined);
  request.abort(new Error("the response was sent"));
  assert.equal(watch.signal.aborted, false);
});

Deno.test("a render still streaming follows its request's signal until all is ready", async () => {
  const streaming = new AbortController();
  const watch = watchBoundaries(streaming.signal, neverFails, undefined, clock);
  let ready!: () => void;
  const allReady = new Promise<void>((resolve) => ready = resolve);
  assert.ok(watch.shellReady(false, allReady));
  const gone = new Error("the client left");
  streaming.abort(gone);
  assert.equal(watch.signal.reason, gone, "aborted with the request's reason");

  const done = new AbortController();
  const later = watchBoundaries(done.signal, neverFails, undefined, clock);
  let readyLater!: () => void;
  const allReadyLater = new Promise<void>((resolve) => readyLater = resolve);
  later.shellReady(false, allReadyLater);
  readyLater();
  await allReadyLater;
  await Promise.resolve(); // the `finally` after it
  done.abort(new Error("the response was sent"));
  assert.equal(later.signal.aborted, false);
  ready();
});
