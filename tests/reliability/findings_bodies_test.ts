/**
 * Issue 11, finding 4: request bodies and deadlines. A POST that sends part of its body and stalls
 * must not hold its connection and its bytes forever — not on a server action, not on the Sentry
 * tunnel, not on an API route that reads `req.text()`: 408 and `Connection: close` once the
 * request's deadline (`REQUEST_TIMEOUT_MS`) passes. The bytes held by bodies still arriving are
 * bounded across connections (`REQUEST_BODY_BUDGET`): past it, 503 with `Retry-After`, and the
 * server still answers. An action that never settles ends on the failure screen with a digest. A
 * chunked body over the action limit gets 413 at once instead of a half-read, hung connection;
 * so does one over a folder's own `bodyLimit(…)` middleware.
 */
import assert from "node:assert/strict";
import { encodeCall } from "../../lib/shared/action_wire.ts";
import { startSentryReceiver } from "shell/testing";
import { started } from "../helpers/wait.ts";
import type { TestServer } from "../helpers/server.ts";
import { builtTarget, type Exchange, exchange, startTarget, within } from "./target.ts";

const MIB = 1024 * 1024;
const DEADLINE_MS = 1000;
const SHUTDOWN_DEADLINE_MS = 300;
/** "Did not hang": far above the deadline, far below forever. */
const HANG_MS = 15_000;

const FILES = {
  "routes/_findings/actions.ts": `"use server";
    export async function echo(...args: unknown[]) {
      return args.length;
    }
    export async function never(..._args: unknown[]) {
      await new Promise(() => {});
    }
  `,
  "routes/api/upload.ts": `
    export const handler = {
      async POST(req: Request) {
        return new Response(String((await req.text()).length));
      },
    };
  `,
  "routes/small/_middleware.ts": `
    import { bodyLimit } from "../../lib/mod.ts";
    export const handler = bodyLimit(1024);
  `,
  "routes/small/upload.ts": `
    export const handler = {
      async POST(req: Request) {
        return new Response(String((await req.text()).length));
      },
    };
  `,
};

function postHead(server: TestServer, target: string, headers: Record<string, string>): string {
  const lines = [
    `POST ${target} HTTP/1.1`,
    `Host: 127.0.0.1:${server.port}`,
    `Origin: ${server.origin}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return lines.join("\r\n") + "\r\n\r\n";
}

/** A body of `n` bytes of a form field, so what arrives so far parses as form data. */
function formBytes(n: number): Uint8Array {
  const bytes = new Uint8Array(n).fill(0x78); // "x"
  bytes.set(new TextEncoder().encode("message="));
  return bytes;
}

Deno.test("finding 4: a stalled or endless request is ended by the deadline", async (t) => {
  await using receiver = startSentryReceiver();
  const built = await builtTarget(FILES);
  await using server = await startTarget({
    REQUEST_TIMEOUT_MS: String(DEADLINE_MS),
    SENTRY_DSN: receiver.dsn,
    SENTRY_TUNNEL: "1",
    SENTRY_TRACES_SAMPLE_RATE: "0",
  }, { root: built.root });
  const ids = await built.actionIds();

  const stalled: [string, string, Record<string, string>][] = [
    ["a server action", `/_action/${ids.echo}`, {
      "Content-Type": "application/x-www-form-urlencoded",
    }],
    ["the Sentry tunnel", "/_sentry", { "Content-Type": "text/plain;charset=UTF-8" }],
    ["an API route reading req.text()", "/api/upload", { "Content-Type": "text/plain" }],
  ];
  // The island's stub asks for JSON and reads the digest from it (its error carries it); a form
  // posted by a browser gets the screen.
  const endless: [string, BodyInit, string, string][] = [
    ["called from an island", encodeCall([]), "application/json", "application/json"],
    [
      "posted as a form",
      new URLSearchParams({ note: "hello" }),
      "text/html,*/*;q=0.8",
      "text/html; charset=UTF-8",
    ],
  ];
  // Each of these ends only at the deadline: all sent at once, they wait for it together, and each
  // step below checks its own.
  const stalledAnswers = stalled.map(([, target, headers]) =>
    started(() =>
      // 1 MiB announced (the action and tunnel limit), one byte short of it sent, then silence.
      exchange(
        server.port,
        postHead(server, target, { ...headers, "Content-Length": String(MIB) }),
        { body: formBytes(MIB - 1), timeoutMs: HANG_MS, headOnly: true },
      )
    )
  );
  const endlessAnswers = endless.map(([, body, accept]) =>
    started(async () => {
      const began = performance.now();
      const res = await server.fetch(`/_action/${ids.never}`, {
        method: "POST",
        body,
        headers: { Origin: server.origin, Accept: accept },
        signal: AbortSignal.timeout(HANG_MS),
      });
      return { res, text: await res.text(), ms: performance.now() - began };
    })
  );

  for (const [i, [what, target]] of stalled.entries()) {
    await t.step(`a stalled upload to ${what}: 408 and Connection: close`, async () => {
      const res = await stalledAnswers[i]();
      assert.equal(res.status, 408, `after ${Math.round(res.ms)} ms`);
      // Said; Deno itself keeps the socket until the client sends the rest or leaves.
      assert.equal(res.headers.get("connection"), "close");
      const refused = (line: Record<string, unknown>) =>
        line.status === 408 && line.path === target;
      await server.waitForLog(refused);
      assert.equal(server.logs().filter(refused).length, 1, "one warning per refused body");
    });
  }

  for (const [i, [how, , , type]] of endless.entries()) {
    await t.step(`an action that never settles, ${how}: 500 with a digest`, async () => {
      const { res, text, ms } = await endlessAnswers[i]();
      assert.equal(res.status, 500, `after ${Math.round(ms)} ms`);
      assert.equal(res.headers.get("content-type"), type);
      const digest = /Digest: <code>([^<]+)<\/code>/.exec(text)?.[1] ?? digestOfJson(text);
      assert.ok(digest, `a digest in ${text.slice(0, 300)}`);
      const line = await server.waitForLog((line) => line.digest === digest);
      assert.equal((line.error as { name: string }).name, "DeadlineExceeded");
    });
  }

  // 2 MB, as the finding had it; and 32 MiB, more than the sockets' buffers hold on loopback (some
  // 5 MiB here): a server that stops reading at the limit leaves such a client stuck mid-upload.
  for (const total of [2 * 1000 * 1000, 32 * MIB]) {
    await t.step(
      `a chunked ${total} byte body to an action: 413, and the upload not stuck`,
      async () => {
        const head = postHead(server, `/_action/${ids.echo}`, {
          "Content-Type": "application/x-www-form-urlencoded",
          "Transfer-Encoding": "chunked",
        });
        const res = await exchange(server.port, head, {
          body: chunked(total),
          timeoutMs: HANG_MS,
          headOnly: true,
          waitForBody: true,
        });
        assert.equal(res.status, 413, `after ${Math.round(res.ms)} ms`);
        assert.ok(res.bodySent, "the client could send all of its body");
      },
    );
  }

  await t.step(
    "a folder's bodyLimit(1024): within it 200, past it 413, chunked or not",
    async () => {
      const post = (body: BodyInit) => server.fetch("/small/upload", { method: "POST", body });
      const within = await post("x".repeat(1024));
      assert.deepEqual([within.status, await within.text()], [200, "1024"]);
      const declared = await post("x".repeat(1025));
      assert.equal(declared.status, 413);
      await declared.body?.cancel();
      const head = postHead(server, "/small/upload", {
        "Content-Type": "text/plain",
        "Transfer-Encoding": "chunked",
      });
      const res = await exchange(server.port, head, {
        body: chunked(32 * MIB),
        timeoutMs: HANG_MS,
        headOnly: true,
        waitForBody: true,
      });
      assert.equal(res.status, 413, `after ${Math.round(res.ms)} ms`);
      assert.ok(res.bodySent, "the client could send all of its body");
    },
  );

  const after = await server.fetch("/");
  assert.equal(after.status, 200);
  await after.body?.cancel();
});

Deno.test("finding 4: bodies in flight are bounded by REQUEST_BODY_BUDGET", async () => {
  const built = await builtTarget(FILES);
  await using server = await startTarget({
    // Long enough that nothing is cut by the deadline while the budget fills.
    REQUEST_TIMEOUT_MS: "60000",
    REQUEST_BODY_BUDGET: String(4 * MIB),
  }, { root: built.root });
  const ids = await built.actionIds();

  // Twelve uploads of 600 KB that never finish: 7 MB, where the budget holds 4 MiB. Those past it
  // are refused at once; the others hold their bytes, waiting for the rest of their bodies.
  const held: Deno.Conn[] = [];
  const letGo = new AbortController();
  try {
    const head = postHead(server, `/_action/${ids.echo}`, {
      "Content-Type": "application/x-www-form-urlencoded",
      "Content-Length": String(MIB - 1),
    });
    const uploads = Array.from({ length: 12 }, () =>
      exchange(server.port, head, {
        body: formBytes(600 * 1024),
        timeoutMs: HANG_MS,
        headOnly: true,
        keepOpen: (conn) => held.push(conn),
        signal: letGo.signal,
      }));
    // Waited for as they come: four refusals at least (or every upload answered).
    const answered: Exchange[] = [];
    await within(
      new Promise<void>((enough) => {
        for (const upload of uploads) {
          upload.then((res) => {
            answered.push(res);
            const refused = answered.filter((res) => res.status === 503).length;
            if (refused >= 4 || answered.length === uploads.length) enough();
          });
        }
      }),
      HANG_MS,
    );

    // Meanwhile, the server answers everyone else.
    const began = performance.now();
    const home = await server.fetch("/", { signal: AbortSignal.timeout(HANG_MS) });
    assert.equal(home.status, 200);
    await home.body?.cancel();
    assert.ok(performance.now() - began < HANG_MS);

    // The uploads not answered by now still wait for their bodies: stop waiting for them.
    letGo.abort();
    const answers = await Promise.all(uploads);
    const refused = answers.filter((res) => res.status === 503);
    const statuses = answers.map((res) => res.status);
    assert.ok(refused.length >= 4, `503s past the budget; statuses: ${statuses}`);
    assert.ok(
      statuses.every((status) => status === 503 || status === 0),
      `the others still wait for their bodies; statuses: ${statuses}`,
    );
    for (const res of refused) assert.equal(res.headers.get("retry-after"), "1");
  } finally {
    letGo.abort();
    for (const conn of held) {
      try {
        conn.close();
      } catch { /* closed by the server */ }
    }
  }
});

/** `total` bytes of a form field, as chunks of 64 KiB with chunked framing. */
async function* chunked(total: number) {
  const data = formBytes(64 * 1024);
  const frame = new TextEncoder().encode(`${data.length.toString(16)}\r\n`);
  const crlf = new TextEncoder().encode("\r\n");
  for (let sent = 0; sent < total; sent += data.length) {
    yield frame;
    yield data;
    yield crlf;
  }
  yield new TextEncoder().encode("0\r\n\r\n");
}

function digestOfJson(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { digest?: string }).digest;
  } catch {
    return undefined;
  }
}

Deno.test("finding 4: a stalled upload does not hold a graceful shutdown", async () => {
  const built = await builtTarget(FILES);
  // A short deadline: the stop waits out a grace of twice it and a second for the held socket.
  await using server = await startTarget(
    { REQUEST_TIMEOUT_MS: String(SHUTDOWN_DEADLINE_MS) },
    { root: built.root },
  );
  const ids = await built.actionIds();
  const held: Deno.Conn[] = [];
  try {
    // Answered 408 at the deadline; Deno still keeps the socket, waiting for the rest of the body.
    const head = postHead(server, `/_action/${ids.echo}`, {
      "Content-Type": "application/x-www-form-urlencoded",
      "Content-Length": String(MIB),
    });
    const res = await exchange(server.port, head, {
      body: formBytes(1000),
      timeoutMs: HANG_MS,
      headOnly: true,
      keepOpen: (conn) => held.push(conn),
    });
    assert.equal(res.status, 408);

    const began = performance.now();
    const timer = setTimeout(() => server.kill(), HANG_MS);
    const code = await server.stop();
    clearTimeout(timer);
    const took = Math.round(performance.now() - began);
    assert.equal(code, 0, `SIGTERM: exit code ${code} after ${took} ms`);
  } finally {
    for (const conn of held) conn.close();
  }
});
