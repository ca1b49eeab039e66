/**
 * @module
 * `RepeatWindow` (lib/errors/repeats.ts): which repeats of a failure the browser repeats on its own
 * are sent - the first of a digest, then none until its window has passed - and its bound on the
 * digests it keeps; with a KV store shared by several windows (`repeatsInKv`, as processes share
 * one), one sending a window between them, a burst asking the store once, and a store that fails
 * or does not answer in time leaving it to the window's own bound, with one warning line a window;
 * and an app whose telemetry sends
 * no events (Deno's OpenTelemetry alone), whose repeats name none. (Through an app and the real
 * SDK: tests/sentry_stream_test.tsx; across two servers: tests/process/failure_repeats_test.ts.)
 */
import assert from "node:assert/strict";
import { RepeatWindow, type SharedRepeats } from "../lib/errors/repeats.ts";
import { repeatsInKv } from "../lib/errors/repeats_kv.ts";
import { eventStream, type Handlers, type ServerEvent } from "../lib/mod.ts";
import { otelTelemetry } from "../lib/otel/telemetry.ts";
import { captureLogs } from "shell/testing";
import { memoryApp } from "./helpers/app.ts";

Deno.test("RepeatWindow: a digest sent is repeated until its window has passed", () => {
  let now = 1_000;
  const window = new RepeatWindow(60_000, 10, { now: () => now });
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
  const window = new RepeatWindow(60_000, 3, { now: () => 0 });
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

Deno.test("RepeatWindow on a shared KV: one sending a window between the processes", async () => {
  using kv = await Deno.openKv(":memory:");
  let now = 1_000;
  const clock = { now: () => now };
  // Two processes' windows on one store.
  const a = new RepeatWindow(60_000, 10, { shared: repeatsInKv(kv), ...clock });
  const b = new RepeatWindow(60_000, 10, { shared: repeatsInKv(kv), ...clock });
  assert.equal(await a.check("D", "event-a"), undefined, "the first: a sends it");
  assert.deepEqual(await b.check("D", "event-b"), { at: 1_000, eventId: "event-a" });
  // Kept in b's own window now: its next failures ask no store.
  assert.deepEqual(b.check("D", "event-b2"), { at: 1_000, eventId: "event-a" });
  assert.deepEqual(a.check("D", "event-a2"), { at: 1_000, eventId: "event-a" });
  assert.equal(await b.check("E", "event-e"), undefined, "another digest is no repeat");
  now += 60_000;
  assert.equal(await b.check("D", "event-b3"), undefined, "a window later: b sends it");
  assert.equal((await a.check("D", "event-a3"))?.eventId, "event-b3");
});

Deno.test("RepeatWindow on a shared KV: a burst in one process asks the store once", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = repeatsInKv(kv);
  let asked = 0;
  const counted: SharedRepeats = (...args) => (asked++, store(...args));
  const window = new RepeatWindow(60_000, 10, { shared: counted });
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, i) => window.check("D", `event-${i}`)),
  );
  assert.equal(asked, 1);
  assert.equal(answers[0], undefined, "the first is sent");
  for (const answer of answers.slice(1)) assert.equal(answer?.eventId, "event-0");
});

Deno.test("RepeatWindow on a shared KV: a store that fails leaves it to the window, and says so", async () => {
  using logs = captureLogs();
  const kv = await Deno.openKv(":memory:");
  kv.close(); // every read now fails
  const window = new RepeatWindow(60_000, 10, { shared: repeatsInKv(kv) });
  assert.equal(await window.check("D", "event-1"), undefined, "sent");
  assert.equal(window.check("D", "event-2"), window.repeated("D"), "then a repeat, no store");
  assert.equal(window.repeated("D")?.eventId, "event-1");
  const [line, ...more] = logs.lines;
  assert.deepEqual(more, []);
  assert.equal(line.level, "warn");
  assert.match(line.msg, /^failure repeats: no answer from KV/);
  assert.match(line.error, /^BadResource/, "the store's own error");
  assert.equal(line.window_ms, 60_000);
  assert.ok(!("digest" in line), "no failure's line: filters of failures by digest skip it");
});

Deno.test("RepeatWindow on a failing store: one warning a window, however many failures meet it", async () => {
  using logs = captureLogs();
  const kv = await Deno.openKv(":memory:");
  kv.close();
  let now = 1_000;
  const window = new RepeatWindow(60_000, 1_000, { shared: repeatsInKv(kv), now: () => now });
  const warnings = () => logs.lines.filter((line) => line.level === "warn").length;
  // 200 digests, each asking the store: every one sent, one line said it.
  for (let i = 0; i < 200; i++) assert.equal(await window.check(`D${i}`, `event-${i}`), undefined);
  assert.equal(warnings(), 1);
  now += 59_999;
  assert.equal(await window.check("late", "event-late"), undefined);
  assert.equal(warnings(), 1, "still the same window");
  now += 1;
  assert.equal(await window.check("next", "event-next"), undefined);
  assert.equal(warnings(), 2, "a window later, once more");
});

Deno.test("RepeatWindow on a shared store that does not answer: sent after waitMs, and said", async () => {
  using logs = captureLogs();
  let answer: () => void = () => {};
  const stuck: SharedRepeats = () => new Promise((resolve) => answer = () => resolve(undefined));
  const window = new RepeatWindow(60_000, 10, { shared: stuck, waitMs: 50 });
  assert.equal(await window.check("D", "event-1"), undefined, "sent, not waiting for the store");
  assert.equal(window.repeated("D")?.eventId, "event-1");
  answer();
  assert.deepEqual(logs.lines.map((line) => [line.level, line.error]), [
    ["warn", "no answer within 50 ms"],
  ]);
});

Deno.test(
  "a failing stream under telemetry that sends no events (Deno's OpenTelemetry alone): no repeat names an event",
  async () => {
    using logs = captureLogs();
    using kv = await Deno.openKv(":memory:");
    const app = memoryApp({
      routes: {
        "feed.ts": {
          handler: {
            GET: (req, ctx) =>
              eventStream(req, ctx, async function* (): AsyncGenerator<ServerEvent> {
                yield { id: 1, event: "hello", data: "" };
                throw new Error("the feed broke");
              }),
          } satisfies Handlers,
        },
      },
    }, { kv, telemetry: otelTelemetry() });
    try {
      for (let i = 0; i < 3; i++) await (await app.request("/feed")).text();
      const lines = logs.lines.filter((line) => "digest" in line);
      assert.equal(lines.length, 3, "every failure its line");
      for (const line of lines) {
        assert.equal(line.sentry_event_id, null, "nothing is sent");
        assert.equal(line.repeat_of, undefined, "so no line names an event");
      }
      // Nothing is sent, so there is nothing to agree on with other processes either.
      assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["failure_sent"] })), []);
    } finally {
      await app.close();
    }
  },
);
