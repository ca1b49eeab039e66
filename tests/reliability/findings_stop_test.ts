/**
 * Issue 22, findings 4 and 5: a stop is clean under every entry point.
 *  - `deno serve main.ts`, alone and `--parallel`, with 20 event streams open and an upload stalled
 *    in the middle of its body: SIGTERM ends the streams, the process exits 0 within its grace (two
 *    deadlines and a second), where Deno's own stop waited for them for ever;
 *  - `deno task start`'s launcher killed with SIGKILL: its server child goes too, and the port is
 *    free for the next start.
 */
import assert from "node:assert/strict";
import { startOtlpReceiver } from "../helpers/otlp_receiver.ts";
import type { TestServer } from "../helpers/server.ts";
import { builtTarget, exchange, startTarget } from "./target.ts";

const FILES = {
  "routes/findings/events.ts": `import { eventStream } from "../../lib/mod.ts";
    export const handler = {
      GET(req: Request, ctx: Parameters<typeof eventStream>[1]) {
        return eventStream(req, ctx, async function* (signal) {
          await new Promise((resolve) => signal.addEventListener("abort", resolve));
        });
      },
    };
  `,
  "routes/findings/upload.ts": `export const handler = {
    async POST(req: Request) {
      return new Response(String((await req.text()).length));
    },
  };\n`,
  "routes/findings/worker.ts": `const id = crypto.randomUUID();
    export const handler = { GET: () => new Response(id) };\n`,
  "routes/findings/pid.ts":
    `export const handler = { GET: () => new Response(String(Deno.pid)) };\n`,
};

const DEADLINE_MS = 1000;
/** "Did not hang": far past the grace (2 × the deadline + 1 s), far short of for ever. */
const HANG_MS = 20_000;

/**
 * Waits until `seen` distinct workers answered, over connections of their own. Bounded by time, not
 * by a count: on a loaded machine a worker may still be loading after hundreds of answers from another.
 */
async function everyWorker(server: TestServer, workers: number): Promise<void> {
  const seen = new Set<string>();
  const until = Date.now() + HANG_MS * 3;
  while (seen.size < workers && Date.now() < until) {
    const head =
      `GET /findings/worker HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nConnection: close\r\n\r\n`;
    const res = await exchange(server.port, head, { timeoutMs: HANG_MS });
    seen.add(new TextDecoder().decode(res.body).trim());
  }
  assert.equal(seen.size, workers, "every worker answers");
}

/** SIGTERM; the exit code, or undefined if it had not exited within `ms` (then SIGKILL). */
async function stopWithin(server: TestServer, ms: number): Promise<number | undefined> {
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    server.kill();
  }, ms);
  const code = await server.stop();
  clearTimeout(timer);
  return late ? undefined : code;
}

const WAYS: [string, string[], number][] = [
  ["deno serve main.ts", [], 1],
  ["deno serve --parallel main.ts", ["--parallel"], 2],
];

for (const [way, flags, workers] of WAYS) {
  Deno.test(`finding 4: ${way} stops on SIGTERM with streams and a stalled upload open`, async () => {
    const built = await builtTarget(FILES);
    const server = await startTarget({ REQUEST_TIMEOUT_MS: String(DEADLINE_MS) }, {
      root: built.root,
      args: (port) => ["serve", "-A", ...flags, "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
    });
    const held: Deno.Conn[] = [];
    try {
      // A SIGTERM while a worker still starts can be missed (docs/deploying.md): all are up first.
      await everyWorker(server, workers);
      const streams = await Promise.all(Array.from({ length: 20 }, async () => {
        const res = await server.fetch("/findings/events");
        const reader = res.body!.getReader();
        await reader.read(); // `retry:`: the stream is open
        return reader;
      }));
      // Answered 408 at the deadline; Deno keeps the socket for the rest of the body.
      const stalled = await exchange(
        server.port,
        `POST /findings/upload HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n` +
          "Content-Type: text/plain\r\nContent-Length: 1000\r\n\r\n",
        {
          body: new TextEncoder().encode("x".repeat(10)),
          timeoutMs: HANG_MS,
          headOnly: true,
          keepOpen: (conn) => held.push(conn),
        },
      );
      assert.equal(stalled.status, 408);

      const began = performance.now();
      const code = await stopWithin(server, HANG_MS);
      const took = Math.round(performance.now() - began);
      assert.equal(code, 0, `exit code after SIGTERM (${took} ms; undefined: still running)`);
      for (const reader of streams) {
        const ended = await reader.read().then(({ done }) => done, () => true);
        assert.ok(ended, "the event stream ended");
      }
    } finally {
      for (const conn of held) {
        try {
          conn.close();
        } catch { /* closed by the server's exit */ }
      }
      server.kill();
      await server.stop();
    }
  });
}

Deno.test("finding 5: the launcher's server child never outlives it, even after SIGKILL", async () => {
  const built = await builtTarget(FILES);
  // With a DSN the launcher runs the server as its child (Deno's OpenTelemetry set up for it).
  await using rx = startOtlpReceiver();
  const server = await startTarget({
    SENTRY_DSN: `http://publickey@127.0.0.1:${rx.port}/42`,
    SENTRY_TRACES_SAMPLE_RATE: "1",
  }, { root: built.root, script: "lib/cli/launch.ts" });
  const child = Number(await (await server.fetch("/findings/pid")).text());
  const parent = Number((await Deno.readTextFile(`/proc/${child}/stat`)).split(" ")[3]);
  assert.notEqual(parent, Deno.pid, "a launcher between the test and the server");
  try {
    server.kill(); // the launcher, with SIGKILL: it can pass nothing on
    const giveUp = performance.now() + HANG_MS;
    while (await Deno.stat(`/proc/${child}`).then(() => true, () => false)) {
      assert.ok(performance.now() < giveUp, `the server ${child} outlived its launcher`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The next start can have the port.
    Deno.listen({ hostname: "127.0.0.1", port: server.port }).close();
  } finally {
    try {
      Deno.kill(child, "SIGKILL"); // an orphan of the code before the fix
    } catch { /* gone, as it should be */ }
    await server.stop(); // its output ends once nothing holds it open
  }
});
