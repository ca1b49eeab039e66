/**
 * @module
 * Live updates: a log's feed (one KV watch per store, shared by every subscriber, catching up from
 * a given id, across handles on one file and, polling, across processes; failing loudly, starting
 * afresh) and the event stream that carries it to a browser (SSE framing, heartbeats, pull-based,
 * ended by the client leaving or the app closing).
 */
import assert from "node:assert/strict";
import { feedOf, sinceOf } from "../../lib/kv/feed.ts";
import { append, kvLog } from "../../lib/kv/log.ts";
import { failures } from "../../lib/errors/failure.ts";
import { eventStream, type ServerEvent } from "../../lib/server/event_stream.ts";
import { InFlight } from "../../lib/server/in_flight.ts";
import { refusalLines } from "../../lib/server/request_log.ts";
import type { AppScope } from "../../lib/server/scope.ts";
import { heapAfterGc, heapGrowth } from "../helpers/heap.ts";
import { tempStore } from "../helpers/kv.ts";
import { within } from "../helpers/wait.ts";
import { Context } from "hono";
import { internalsOf } from "../../lib/server/internals.ts";

interface Note {
  id: number;
  text: string;
}
const NOTES = kvLog<Note>(["notes"]);
const add = (kv: Deno.Kv, text: string) => append(kv, NOTES, (id) => ({ id, text }));
const texts = (notes: Note[]) => notes.map((n) => n.text);

/** Takes `n` items from an iterator, failing after `ms`. */
async function take<T>(it: AsyncIterator<T>, n: number, ms = 3000): Promise<T[]> {
  const out: T[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) =>
    timer = setTimeout(() => reject(new Error(`timeout after ${out.length}`)), ms)
  );
  try {
    while (out.length < n) {
      const r = await Promise.race([it.next(), timeout]);
      if (r.done) break;
      out.push(r.value);
    }
  } finally {
    clearTimeout(timer);
  }
  return out;
}

/** The store, counting the KV watches opened on it. */
function counted(kv: Deno.Kv): { kv: Deno.Kv; watches: () => number } {
  let watches = 0;
  const proxy = new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (prop === "watch") watches++;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: proxy, watches: () => watches };
}

Deno.test("sinceOf: Last-Event-ID first, then ?since=, plain integers only", () => {
  const of = (headers: Record<string, string>, query = "") =>
    sinceOf(new Request(`http://x/e${query}`, { headers }), new URL(`http://x/e${query}`));
  assert.equal(of({ "Last-Event-ID": "7" }, "?since=3"), 7);
  assert.equal(of({}, "?since=3"), 3);
  assert.equal(of({ "Last-Event-ID": "junk" }, "?since=0"), 0);
  for (const junk of ["", "-1", "1e3", "4.2", "abc", "9".repeat(16)]) {
    assert.equal(of({ "Last-Event-ID": junk }), undefined, junk);
  }
});

Deno.test("feed: missed items first, then live ones; without since, live ones only", async () => {
  const kv = await Deno.openKv(":memory:");
  const feed = feedOf(kv, NOTES);
  await add(kv, "a");
  await add(kv, "b");
  const stop = new AbortController();
  const fromOne = feed.subscribe(1, { signal: stop.signal });
  const liveOnly = feed.subscribe(undefined, { signal: stop.signal });
  assert.deepEqual(texts(await take(fromOne, 1)), ["b"]);
  const nextLive = take(liveOnly, 2);
  await new Promise((r) => setTimeout(r, 50));
  await add(kv, "c");
  await add(kv, "d");
  assert.deepEqual(texts(await take(fromOne, 2)), ["c", "d"]);
  assert.deepEqual(texts(await nextLive), ["c", "d"]);
  stop.abort();
  assert.equal((await fromOne.next()).done, true);
  assert.equal((await liveOnly.next()).done, true);
  kv.close();
});

Deno.test("feed: logs whose keys differ only by -0, NaN or Infinity have feeds of their own", async () => {
  // KV keeps ["rooms", 0] and ["rooms", -0] apart (and NaN, Infinity, -Infinity), as the log does;
  // a feed named by JSON took them for one: kvLog(["rooms", Number(room)]) of a client's "-0"
  // was room 0's feed, its subscribers getting room 0's entries and room 0's those of "-0".
  const kv = await Deno.openKv(":memory:");
  const stop = new AbortController();
  const rooms = [0, -0, NaN, Infinity, -Infinity].map((number) => {
    const log = kvLog<Note>(["rooms", number]);
    // From the start (0), not from now: nothing to miss while each feed's watch starts.
    return { log, entries: feedOf(kv, log).subscribe(0, { signal: stop.signal }) };
  });
  const firsts = rooms.map(({ entries }) => take(entries, 1));
  for (const [i, { log }] of rooms.entries()) {
    await append(kv, log, (id) => ({ id, text: `room ${i}` }));
  }
  assert.deepEqual(
    (await Promise.all(firsts)).map(texts),
    rooms.map((_, i) => [`room ${i}`]),
  );
  stop.abort();
  kv.close();
});

Deno.test("feed: one watch per store, shared by all subscribers, running only while they are", async () => {
  const real = await Deno.openKv(":memory:");
  const { kv, watches } = counted(real);
  const feed = feedOf(kv, NOTES, { ringSize: 4 });
  const stop = new AbortController();
  // Through the feed, or the same store and log asked for again: one feed.
  const subscriptions = Array.from(
    { length: 20 },
    (_, i) => (i % 2 ? feed : feedOf(kv, NOTES)).subscribe(0, { signal: stop.signal }),
  );
  const received = subscriptions.map((s) => take(s, 6));
  for (let i = 1; i <= 6; i++) await add(real, `n${i}`);
  for (const got of await Promise.all(received)) {
    assert.deepEqual(texts(got), ["n1", "n2", "n3", "n4", "n5", "n6"]);
  }
  assert.equal(watches(), 1);
  assert.equal(feed.subscribers, 20);
  stop.abort();
  await Promise.all(subscriptions.map((s) => s.next()));
  assert.equal(feed.subscribers, 0);
  // Another store, another feed: two apps in one process do not mix.
  const other = await Deno.openKv(":memory:");
  assert.notEqual(feedOf(other, NOTES), feed);
  other.close();
  real.close();
});

Deno.test("feed: logs named per request share one watch, and nothing is kept once none is followed", async () => {
  // Attack 9: feeds were kept by the log object, for the life of the process. A log named in a
  // handler (`kvLog(["rooms", ctx.params.room])`, one object per request) was a feed of its own
  // each time - a KV watch each, never shared - and each stayed, followed or not, under names a
  // client chose.
  const real = await Deno.openKv(":memory:");
  const { kv, watches } = counted(real);
  const room = (name: string) => kvLog<Note>(["rooms", name]);
  const stop = new AbortController();
  const a = feedOf(kv, room("a")).subscribe(0, { signal: stop.signal });
  const b = feedOf(kv, room("a")).subscribe(0, { signal: stop.signal });
  const received = Promise.all([take(a, 1), take(b, 1)]);
  await append(real, room("a"), (id) => ({ id, text: "hello" }));
  assert.deepEqual((await received).map(texts), [["hello"], ["hello"]]);
  assert.equal(watches(), 1, "one watch for one log, however often it was named");
  assert.equal(feedOf(kv, room("a")).subscribers, 2);
  assert.equal(feedOf(kv, room("b")).subscribers, 0, "another log's feed is its own");
  stop.abort();
  await Promise.all([a.next(), b.next()]);

  const N = 1_000;
  const name = (i: number) => `${i}`.padEnd(1_900, "r");
  let before = 0;
  for (let i = -N; i < N; i++) {
    if (i === 0) before = await heapAfterGc(); // after as many of the same, to warm up
    // Named and never followed (a stream refused, or left before it began), or followed a while.
    const feed = feedOf(kv, room(name(i)));
    if (i % 2) continue;
    const leaving = new AbortController();
    const subscription = feed.subscribe(undefined, { signal: leaving.signal });
    const next = subscription.next();
    leaving.abort();
    await next;
  }
  const grown = await heapGrowth(before, 1_000_000);
  assert.ok(grown < 1_000_000, `${N} rooms named left ${(grown / 1e6).toFixed(1)} MB behind`);
  real.close();
});

Deno.test("feed: a subscriber behind the ring reads its gap from KV; a long absence gets the newest", async () => {
  const kv = await Deno.openKv(":memory:");
  const feed = feedOf(kv, NOTES, { ringSize: 2 });
  const stop = new AbortController();
  // From 0, not from "now": a live-only subscriber starts where the watch first reports, which a
  // loaded machine can delay past the first appends (a pause of 50 ms stood for it).
  const fast = feed.subscribe(0, { signal: stop.signal });
  const pending = take(fast, 5);
  for (let i = 1; i <= 5; i++) await add(kv, `n${i}`);
  assert.deepEqual(texts(await pending), ["n1", "n2", "n3", "n4", "n5"]);
  const late = feed.subscribe(1, { signal: stop.signal }); // the ring holds n4, n5 at most
  assert.deepEqual(texts(await take(late, 4)), ["n2", "n3", "n4", "n5"]);
  const away = feed.subscribe(0, { signal: stop.signal, maxBacklog: 2 });
  assert.deepEqual(texts(await take(away, 2)), ["n4", "n5"]);
  stop.abort();
  await Promise.all([fast.return(undefined), late.return(undefined), away.return(undefined)]);
  kv.close();
});

Deno.test("feed: an append through another handle on the file (another worker) is seen at once", async () => {
  await using store = await tempStore();
  const path = store.path;
  const reader = await Deno.openKv(path);
  const writer = await Deno.openKv(path);
  await add(writer, "first");
  const stop = new AbortController();
  const it = feedOf(reader, NOTES).subscribe(1, { signal: stop.signal });
  const pending = take(it, 2, 2000);
  await new Promise((r) => setTimeout(r, 50));
  await add(writer, "second");
  await add(writer, "third");
  assert.deepEqual(texts(await pending), ["second", "third"]);
  stop.abort();
  await it.return(undefined);
  reader.close();
  writer.close();
});

Deno.test("feed: another process on the file fires no watch; pollIntervalMs catches it", async () => {
  await using store = await tempStore();
  const path = store.path;
  const kv = await Deno.openKv(path);
  await add(kv, "local");
  const stop = new AbortController();
  const watched = feedOf(kv, NOTES).subscribe(1, { signal: stop.signal });
  // Another handle on the file, so another feed: one log is one feed per store.
  const polling = await Deno.openKv(path);
  const polled = feedOf(polling, NOTES, { pollIntervalMs: 100 })
    .subscribe(1, { signal: stop.signal });
  // Both subscribed before the other process writes; their bounds start once it has written (a
  // loaded machine can take seconds to start a process: bounds started before it ran out, or
  // passed the watch's check before there was anything to see).
  const fromWatch = watched.next();
  const fromPoll = polled.next();
  await new Promise((r) => setTimeout(r, 100));
  const log = new URL("../../lib/kv/log.ts", import.meta.url).href;
  const { success } = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      "--unstable-kv",
      "--ext=ts",
      `import { append, kvLog } from "${log}";
      const kv = await Deno.openKv(Deno.env.get("KV"));
      await append(kv, kvLog(["notes"]), (id) => ({ id, text: "remote" }));`,
    ],
    env: { KV: path },
  }).output();
  assert.ok(success);
  assert.equal((await within(fromPoll, 5000, "the poll to see the append")).value?.text, "remote");
  // Seen by the poll (100 ms), so long committed: a watch that fired would have by now.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const quiet = new Promise((resolve) => timer = setTimeout(resolve, 1000, "quiet"));
  const heard = await Promise.race([fromWatch.then(() => "fired"), quiet]);
  clearTimeout(timer);
  assert.equal(heard, "quiet");
  stop.abort();
  await Promise.all([watched.return(undefined), polled.return(undefined)]);
  polling.close();
  kv.close();
});

Deno.test("feed: a failing watch fails its subscribers; the next one starts afresh", async () => {
  const real = await Deno.openKv(":memory:");
  let broken = true;
  const kv = new Proxy(real, {
    get(target, prop) {
      if (prop === "watch" && broken) {
        broken = false;
        return () =>
          new ReadableStream({
            pull: (c) => c.error(new TypeError("database disk image is malformed")),
          });
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const feed = feedOf(kv, NOTES);
  const stop = new AbortController();
  await assert.rejects(
    feed.subscribe(0, { signal: stop.signal }).next(),
    /database disk image is malformed/,
  );
  assert.equal(feed.subscribers, 0);
  const fresh = feed.subscribe(0, { signal: stop.signal });
  const pending = take(fresh, 1);
  await add(real, "after");
  assert.deepEqual(texts(await pending), ["after"]);
  stop.abort();
  await fresh.return(undefined);
  real.close();
});

Deno.test("feed: a store closed under it fails its subscribers instead of leaving them hanging", async () => {
  const kv = await Deno.openKv(":memory:");
  const next = feedOf(kv, NOTES).subscribe(0).next();
  await new Promise((r) => setTimeout(r, 50));
  kv.close();
  await assert.rejects(next, /The KV watch ended \(was the store closed\?\)/);
});

function scope(): AppScope & { close(): void } {
  const closing = new AbortController();
  return {
    build: "b1",
    trustProxy: false,
    closing: closing.signal,
    failures: failures({ dev: false, root: Deno.cwd() }),
    eventStreams: { open: 0, max: 100 },
    requests: new InFlight(),
    refusals: refusalLines(),
    close: () => closing.abort(),
  };
}

/** `eventStream` for a request, as a handler calls it. */
function stream(
  events: (signal: AbortSignal) => AsyncIterable<ServerEvent>,
  options: { heartbeatMs?: number; request?: Request; appScope?: AppScope } = {},
) {
  const req = options.request ?? new Request("http://x/events");
  // A request's context, as the app's scope middleware leaves it.
  const c = new Context(req, { env: undefined, path: new URL(req.url).pathname });
  internalsOf(c).appScope = options.appScope ?? scope();
  return eventStream(req, c, events, { heartbeatMs: options.heartbeatMs });
}

Deno.test("eventStream: SSE framing, retry first, heartbeats while idle", async () => {
  const res = stream(async function* (signal) {
    yield { id: 1, event: "entry", data: JSON.stringify({ text: "two\nlines" }) };
    yield { id: "2\nevent: forged", data: "a\nb" };
    await new Promise((r) => signal.addEventListener("abort", r));
  }, { heartbeatMs: 50 });
  assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
  assert.equal(res.headers.get("cache-control"), "no-store");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes(": ping")) text += (await reader.read()).value;
  assert.equal(
    text,
    "retry: 1000\n\nevent: app-build\ndata: b1\n\n" +
      'id: 1\nevent: entry\ndata: {"text":"two\\nlines"}\n\n' +
      "id: 2 event: forged\ndata: a\ndata: b\n\n" +
      ": ping\n\n",
  );
  await reader.cancel();
});

Deno.test("eventStream: a client that does not read holds one event, not a queue; leaving ends it", async () => {
  let taken = 0;
  let ended: AbortSignal | undefined;
  const res = stream(async function* (signal) {
    ended = signal;
    for (let id = 1;; id++) {
      taken++;
      yield { id, data: "x" };
    }
  });
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(taken <= 2, `taken ${taken}`);
  const reader = res.body!.getReader();
  for (let i = 0; i < 10; i++) await reader.read();
  assert.ok(taken <= 13, `taken ${taken}`);
  await reader.cancel();
  assert.equal(ended?.aborted, true);
});

Deno.test("eventStream: the client leaving, the request aborted or the app closing ends it and its subscription", async () => {
  for (const end of ["client", "request", "app"] as const) {
    const kv = await Deno.openKv(":memory:");
    const feed = feedOf(kv, NOTES);
    for (const text of ["a", "b", "c"]) await add(kv, text);
    const app = scope();
    const request = new AbortController();
    const res = stream(async function* (signal) {
      for await (const note of feed.subscribe(0, { signal })) {
        yield { id: note.id, data: note.text };
      }
    }, { appScope: app, request: new Request("http://x/e", { signal: request.signal }) });
    // The client reads the first bytes, then stops: an event waits unread, the source at a yield.
    const reader = res.body!.getReader();
    await reader.read();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(feed.subscribers, 1, end);
    if (end === "client") await reader.cancel();
    if (end === "request") request.abort();
    if (end === "app") app.close();
    if (end !== "client") { while (!(await reader.read()).done); // what was queued, then the end
     }
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(feed.subscribers, 0, end);
    kv.close();
  }
});

Deno.test("eventStream: a source that fails is logged with a digest and the stream ends", async () => {
  const lines: string[] = [];
  const original = console.log;
  console.log = (line: string) => lines.push(line);
  try {
    const res = stream(async function* () {
      yield { data: "first" };
      throw new TypeError("database disk image is malformed");
    });
    assert.equal(await res.text(), "retry: 1000\n\nevent: app-build\ndata: b1\n\ndata: first\n\n");
  } finally {
    console.log = original;
  }
  const logged = JSON.parse(lines[0]);
  assert.equal(logged.level, "error");
  // The app's failure line (tests/sentry_stream_test.tsx has its Sentry event).
  assert.equal(logged.msg, "TypeError: database disk image is malformed");
  assert.equal(logged.path, "/events");
  assert.equal(logged.status, 500);
  assert.match(logged.digest, /^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
  assert.equal(logged.error.message, "database disk image is malformed");
});
