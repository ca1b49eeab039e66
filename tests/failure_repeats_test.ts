/**
 * @module
 * `RepeatWindow` (lib/errors/repeats.ts): which repeats of a failure the browser repeats on its own
 * are sent - the first of a digest, then none until its window has passed - and its bound on the
 * digests it keeps. (Through an app and the real SDK: tests/sentry_stream_test.tsx.)
 */
import assert from "node:assert/strict";
import { RepeatWindow } from "../lib/errors/repeats.ts";

Deno.test("RepeatWindow: a digest sent is repeated until its window has passed", () => {
  let now = 1_000;
  const window = new RepeatWindow(60_000, 10, () => now);
  assert.equal(window.repeated("A"), undefined, "never sent");
  window.sent("A", "event-1");
  now += 59_999;
  assert.deepEqual(window.repeated("A"), { at: 1_000, eventId: "event-1" });
  assert.equal(window.repeated("B"), undefined, "another digest is no repeat");
  now += 1;
  assert.equal(window.repeated("A"), undefined, "a minute later: sent again");
  window.sent("A", "event-2");
  assert.equal(window.repeated("A")?.eventId, "event-2");
});

Deno.test("RepeatWindow: keeps at most `max` digests, dropping the one sent longest ago", () => {
  const window = new RepeatWindow(60_000, 3, () => 0);
  for (const digest of ["A", "B", "C"]) window.sent(digest, digest);
  window.sent("A", "A again"); // now the latest
  window.sent("D", "D");
  assert.equal(window.repeated("B"), undefined, "the oldest went");
  for (const digest of ["A", "C", "D"]) assert.ok(window.repeated(digest), digest);
  // A million distinct digests (a message that varies) keep it at its bound.
  for (let i = 0; i < 1_000_000; i++) window.sent(`x${i}`, null);
  assert.equal(window.repeated("x999999")?.eventId, null);
  assert.equal(window.repeated("A"), undefined);
});
