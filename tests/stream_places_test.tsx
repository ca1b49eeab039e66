/**
 * @module
 * An event stream holds one of the app's `maxEventStreams` places only while it is being sent.
 * One made for a request that then answers otherwise - JSON, a redirect, a thrown `httpError` or
 * error, a middleware's 304, a deadline that passed, a HEAD request - gives its place back at once
 * and its source stops (its signal aborts: the product's interval and KV watch end). Checked
 * against the bound: twice `maxEventStreams` such requests leave none counted, and a real stream
 * still opens. A stream that is sent - as it is, re-wrapped by a middleware, or read through a
 * middleware's own body (as the Sentry middleware does) - keeps its place and delivers. Over real
 * HTTP where Deno's server is what drops the body: a client gone before the headers, HEAD.
 */
import assert from "node:assert/strict";
import type { Context, MiddlewareHandler } from "hono";
import { eventStream, type Handlers, httpError, type ServerEvent } from "../lib/mod.ts";
import { scopeOfApp } from "../lib/server/scope.ts";
import type { App } from "../lib/server.ts";
import { memoryApp, serveApp } from "./helpers/app.ts";
import { readEvents } from "./helpers/events.ts";

const MAX = 5;

/** What the sources the product started are doing now. */
interface Sources {
  /** Sources whose signal has not aborted: each holds an interval and a KV watch. */
  running: number;
  /** Resolves when each source's KV watch has ended. */
  watchesEnded: Promise<void>[];
}

/**
 * A source as a product writes one: it starts an interval and a KV watch as it is made, and ends
 * both when its signal aborts; it yields a tick every 20 ms.
 */
function productSource(kv: Deno.Kv, sources: Sources) {
  return (signal: AbortSignal): AsyncIterable<ServerEvent> => {
    sources.running++;
    const interval = setInterval(() => {}, 60_000);
    const watch = kv.watch([["places", "x"]]).getReader();
    sources.watchesEnded.push(watch.closed.then(() => {}, () => {}));
    signal.addEventListener("abort", () => {
      sources.running--;
      clearInterval(interval);
      watch.cancel().catch(() => {});
    }, { once: true });
    return (async function* () {
      for (let id = 1; id <= 10_000 && !signal.aborted; id++) {
        yield { id, event: "tick", data: String(id) };
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
  };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A product's error that cannot even be described: reading its message throws. */
class Unreportable extends Error {
  override get message(): string {
    throw new Error("no message to give");
  }
}

async function setup(options: { requestTimeoutMs?: number } = {}) {
  const kv = await Deno.openKv(":memory:");
  const sources: Sources = { running: 0, watchesEnded: [] };
  const source = productSource(kv, sources);
  const stream = (req: Request, ctx: Parameters<typeof eventStream>[1]) =>
    eventStream(req, ctx, source, { heartbeatMs: 60_000 });
  /** Made after its deadline passed (the answer went out without it), by `late`. */
  let lateMade: () => void = () => {};
  const lateDone = new Promise<void>((resolve) => lateMade = resolve);

  const api = (handler: Handlers["GET"]): { handler: Handlers } => ({ handler: { GET: handler } });
  const Page = () => <p>page</p>;
  /** A product's conditional GET after the fact: 304 when the client has the version. */
  const notModified: MiddlewareHandler = async (c, next) => {
    await next();
    if (c.req.header("If-None-Match") === '"v1"') c.res = new Response(null, { status: 304 });
  };
  /** Reads the answer through a body of its own, as the Sentry middleware does. */
  const rewrap: MiddlewareHandler = async (c, next) => {
    await next();
    const reader = c.res.body!.getReader();
    c.res = new Response(
      new ReadableStream({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      }),
      c.res,
    );
    c.header("X-Wrapped", "1"); // Hono makes a new Response around the same body
  };
  /** Answers `/mw/head` itself with a stream: HEAD's body is dropped by Hono, unread. */
  const answersItself: MiddlewareHandler = async (c: Context, next) => {
    if (c.req.path === "/mw/own") return stream(c.req.raw, c);
    stream(c.req.raw, c); // made, and forgotten: the page below answers
    await next();
  };

  const app = memoryApp({
    routes: {
      "ok.ts": api((req, ctx) => stream(req, ctx)),
      "json.ts": api((req, ctx) => {
        stream(req, ctx);
        return Response.json({ error: "a check failed late" }, { status: 409 });
      }),
      "redirect.ts": api((req, ctx) => {
        stream(req, ctx);
        return new Response(null, { status: 303, headers: { Location: "/ok" } });
      }),
      "refused.ts": api((req, ctx) => {
        stream(req, ctx);
        throw httpError(403, "not yours");
      }),
      "fails.ts": api((req, ctx) => {
        stream(req, ctx);
        throw new Error("a product bug after the stream was made");
      }),
      "unreportable.ts": api((req, ctx) =>
        eventStream(req, ctx, async function* () {
          yield { event: "tick", data: "1" };
          throw new Unreportable();
        }, { heartbeatMs: 60_000 })
      ),
      "second.ts": api((req, ctx) => {
        stream(req, ctx);
        return stream(req, ctx);
      }),
      "late.ts": api(async (req, ctx) => {
        await wait(300); // past the deadline (100 ms): the request was answered without this
        const res = stream(req, ctx);
        lateMade();
        return res;
      }),
      "slow.ts": api(async (req, ctx) => {
        const res = stream(req, ctx);
        await wait(300);
        return res;
      }),
      "etag/_middleware.ts": { handler: notModified },
      "etag/events.ts": api((req, ctx) => stream(req, ctx)),
      "wrapped/_middleware.ts": { handler: rewrap },
      "wrapped/events.ts": api((req, ctx) => stream(req, ctx)),
      "mw/_middleware.ts": { handler: answersItself },
      "mw/page.tsx": { default: Page },
      "mw/own.ts": api(() => new Response("the middleware answers first")),
    },
  }, { kv, maxEventStreams: MAX, requestTimeoutMs: options.requestTimeoutMs });
  return {
    app,
    kv,
    sources,
    lateDone,
    open: () => scopeOfApp(app)!.eventStreams.open,
    async [Symbol.asyncDispose]() {
      await app.close();
      kv.close();
    },
  };
}

/** Until `check()` holds, polled for up to 5 s: Deno gives a body back on its own schedule. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await wait(20);
  assert.ok(check(), what);
}

/** Every source's KV watch has ended (bounded: a watch left running fails the test). */
async function watchesEnded(sources: Sources): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) => timer = setTimeout(() => resolve("late"), 5_000));
  const ended = Promise.all(sources.watchesEnded).then(() => "ended");
  try {
    assert.equal(
      await Promise.race([ended, late]),
      "ended",
      "every KV watch the sources began ended",
    );
  } finally {
    clearTimeout(timer);
  }
}

/** A stream still opens: the bound has places. */
async function streamOpens(app: App): Promise<void> {
  const res = await app.request("/ok", { headers: { Accept: "text/event-stream" } });
  assert.equal(res.status, 200, "a stream opens: its places were given back");
  await res.body?.cancel();
}

Deno.test("2x maxEventStreams streams made and not returned: none stays counted, every source stopped", async () => {
  await using t = await setup();
  const answers: Record<string, [string, number]> = {
    json: ["/json", 409],
    redirect: ["/redirect", 303],
    "httpError thrown": ["/refused", 403],
    "error thrown": ["/fails", 500],
    "a middleware's 304": ["/etag/events", 304],
    "a middleware's forgotten stream, the page answering": ["/mw/page", 200],
  };
  for (const [what, [path, status]] of Object.entries(answers)) {
    for (let i = 0; i < 2 * MAX; i++) {
      const res = await t.app.request(path, {
        headers: { Accept: "application/json", "If-None-Match": '"v1"' },
      });
      assert.equal(res.status, status, what);
      await res.body?.cancel();
    }
    assert.equal(t.open(), 0, `${what}: no place held`);
    assert.equal(t.sources.running, 0, `${what}: every source's signal aborted`);
  }
  await watchesEnded(t.sources);
  await streamOpens(t.app);
});

Deno.test("of two streams made, the one returned is sent and keeps its place; the other ends", async () => {
  await using t = await setup();
  const res = await t.app.request("/second");
  assert.equal(res.status, 200);
  assert.equal(t.open(), 1, "the returned one holds a place");
  assert.equal(t.sources.running, 1, "its source runs; the other's stopped");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("event: tick")) text += (await reader.read()).value ?? "";
  await reader.cancel();
  assert.equal(t.open(), 0);
  assert.equal(t.sources.running, 0);
});

Deno.test("a stream made after the deadline answered, or made before and returned too late: no place kept", async () => {
  await using t = await setup({ requestTimeoutMs: 100 });
  for (let i = 0; i < 2 * MAX; i++) {
    const slow = await t.app.request("/slow");
    assert.notEqual(slow.status, 200, "the deadline answered");
    await slow.body?.cancel();
  }
  const late = await t.app.request("/late");
  assert.notEqual(late.status, 200);
  await late.body?.cancel();
  await t.lateDone;
  // The handlers go on past the deadline's answer; what they make then is ended as it is made.
  await eventually(() => t.open() === 0 && t.sources.running === 0, "no place held, no source");
  await watchesEnded(t.sources);
  await streamOpens(t.app);
});

Deno.test("a stream re-wrapped or read through a middleware's own body is sent and keeps its place", async () => {
  await using t = await setup();
  await using served = serveApp(t.app);
  await using wrapped = await readEvents(`${served.origin}/wrapped/events`);
  assert.equal(wrapped.response.headers.get("X-Wrapped"), "1");
  await wrapped.waitFor(3, 10_000);
  assert.equal(t.open(), 1);
  await wrapped.close();
  await eventually(() => t.open() === 0, "given back once the client left");
});

Deno.test("over HTTP: HEAD, answered by a route or by a middleware, holds no place", async () => {
  await using t = await setup();
  await using served = serveApp(t.app);
  for (const path of ["/ok", "/mw/own", "/mw/page"]) {
    for (let i = 0; i < 2 * MAX; i++) {
      const res = await served.fetch(path, { method: "HEAD" });
      assert.equal(res.status, 200, `HEAD ${path}`);
      assert.equal(await res.text(), "");
    }
    await eventually(() => t.open() === 0, `HEAD ${path} holds no place`);
  }
  assert.equal(t.sources.running, 0, "no source runs");
  await watchesEnded(t.sources);
  await using stream = await readEvents(`${served.origin}/ok`);
  await stream.waitFor(1, 10_000);
});

Deno.test("over HTTP: a client gone before the headers holds no place", async () => {
  await using t = await setup();
  await using served = serveApp(t.app);
  // It asks and leaves before the answer (the handler takes 300 ms: `/slow`).
  for (let i = 0; i < 2 * MAX; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: served.port });
    await conn.write(new TextEncoder().encode(`GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
    await wait(20);
    conn.close();
  }
  await eventually(() => t.open() === 0, "a client gone before the headers holds no place");
  await eventually(() => t.sources.running === 0, "and no source runs");
  await watchesEnded(t.sources);
  await using stream = await readEvents(`${served.origin}/ok`);
  await stream.waitFor(1, 10_000);
});

Deno.test("a source that fails with an error its report cannot read: the stream ends and gives its place back", async () => {
  await using t = await setup();
  for (let i = 0; i < 2 * MAX; i++) {
    const res = await t.app.request("/unreportable", { headers: { Accept: "text/event-stream" } });
    assert.equal(
      res.status,
      200,
      `stream ${i + 1}: a place is free, each before gave its own back`,
    );
    await res.text().catch(() => {}); // the event, then the stream ends (or errors)
  }
  await eventually(() => t.open() === 0, "no place held by a stream whose source failed");
  await streamOpens(t.app);
});
