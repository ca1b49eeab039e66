/**
 * Event streams: the one request a proxy keeps open for as long as its client likes (its header
 * and body timeouts close the others, docs/security.md). Without a bound one client's thousands of
 * `EventSource`s took a file descriptor and some 35 KB each (2,000 streams: +70 MB RSS) until the
 * process could accept nothing else. An app keeps at most `EVENT_STREAMS_MAX` open: past it, 503
 * with `Retry-After`; pages are still answered, and a stream that ends gives its place back - as
 * does one a handler made and did not return (in the production server, where the request's signal
 * never aborts after a normal answer: `no-legacy-abort`).
 */
import assert from "node:assert/strict";
import { builtTarget, exchange, startTarget } from "./target.ts";

const FILES = {
  "routes/findings/ok.ts": `export const handler = { GET: () => new Response("ok") };\n`,
  // A stream made, then a check that failed late: the handler answers JSON instead.
  "routes/findings/checked.ts": `import { eventStream } from "../../lib/mod.ts";
    export const handler = {
      GET: (req: Request, ctx: never) => {
        eventStream(req, ctx, async function* (signal: AbortSignal) {
          await new Promise((resolve) => signal.addEventListener("abort", resolve));
        });
        return Response.json({ error: "not yours" }, { status: 403 });
      },
    };
  `,
  "routes/findings/events.ts": `import { eventStream } from "../../lib/mod.ts";
    export const handler = {
      GET: (req: Request, ctx: never) =>
        eventStream(req, ctx, async function* (signal: AbortSignal) {
          await new Promise((resolve) => signal.addEventListener("abort", resolve));
        }),
    };
  `,
};

const MAX = 40;

Deno.test("event streams past EVENT_STREAMS_MAX get 503; pages still answer; a closed stream frees its place", async () => {
  const built = await builtTarget(FILES);
  await using server = await startTarget({ EVENT_STREAMS_MAX: String(MAX) }, { root: built.root });
  const head = (path: string) =>
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAccept: text/event-stream\r\n\r\n`;
  const conns: Deno.Conn[] = [];
  try {
    const statuses: number[] = [];
    for (let i = 0; i < MAX + 20; i++) {
      const { status } = await exchange(server.port, head("/findings/events"), {
        timeoutMs: 10_000,
        headOnly: true,
        keepOpen: (conn) => conns.push(conn),
      });
      statuses.push(status);
    }
    assert.deepEqual(statuses.slice(0, MAX), Array(MAX).fill(200), "the first streams open");
    assert.deepEqual(statuses.slice(MAX), Array(20).fill(503), "then: 503");
    assert.equal(await (await server.fetch("/findings/ok")).text(), "ok", "pages still answer");
  } finally {
    for (const conn of conns) conn.close();
  }
  // The clients left: their streams end and give their places back.
  let status = 0;
  for (let i = 0; i < 100 && status !== 200; i++) {
    const conn: Deno.Conn[] = [];
    ({ status } = await exchange(server.port, head("/findings/events"), {
      timeoutMs: 10_000,
      headOnly: true,
      keepOpen: (c) => conn.push(c),
    }));
    conn.forEach((c) => c.close());
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(status, 200, "a stream opens again once the others closed");
});

Deno.test("2x EVENT_STREAMS_MAX streams made and not returned hold no place: streams still open", async () => {
  const built = await builtTarget(FILES);
  await using server = await startTarget({ EVENT_STREAMS_MAX: String(MAX) }, { root: built.root });
  const statuses = new Set<number>();
  for (let i = 0; i < 2 * MAX; i++) {
    const res = await server.fetch("/findings/checked");
    statuses.add(res.status);
    await res.body?.cancel();
  }
  assert.deepEqual([...statuses], [403]);
  const conns: Deno.Conn[] = [];
  try {
    const { status } = await exchange(
      server.port,
      `GET /findings/events HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAccept: text/event-stream\r\n\r\n`,
      { timeoutMs: 10_000, headOnly: true, keepOpen: (conn) => conns.push(conn) },
    );
    assert.equal(status, 200, "a stream opens: the places of those not returned were given back");
  } finally {
    for (const conn of conns) conn.close();
  }
});
