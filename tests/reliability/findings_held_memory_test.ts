/**
 * Issue 22, findings 2 and 6: what a slow or hung dependency makes the server hold is bounded. A
 * real server process, its peak memory read from `/proc/<pid>/status` (`VmHWM`):
 *  - the Sentry tunnel, with an ingest on 127.0.0.1 that accepts connections and never answers:
 *    envelopes stay counted until their forward ends and only so many are forwarded at once (503
 *    with `Retry-After` past them); each forward ends before the request's deadline, with the
 *    documented 502 — not a 500, a digest and a Sentry event of its own;
 *  - server actions that wait: what calls in flight hold (their bodies and decoded arguments) is
 *    counted against the body budget until they answer: 503 with `Retry-After` past it; and under
 *    `deno serve --parallel` with a small heap, the process lives.
 * Smaller than the scenarios (`bench/faults.ts` runs those by hand, for the figures), and
 * still far past what the code before the fix held.
 */
import assert from "node:assert/strict";
import { encodeCall } from "../../lib/shared/action_wire.ts";
import type { TestServer } from "../helpers/server.ts";
import { builtTarget, startTarget } from "./target.ts";

const MIB = 1024 * 1024;

const FILES = {
  "routes/findings/pid.ts":
    `export const handler = { GET: () => new Response(String(Deno.pid)) };\n`,
  "routes/_findings/actions.ts": `"use server";
    export async function wait(...args: unknown[]) {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return args.length;
    }
  `,
};

/** The server's resident memory now and at its peak, in MB. */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const mb = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) / 1024;
  return { rss: mb("VmRSS"), peak: mb("VmHWM") };
}

async function pidOf(server: TestServer): Promise<number> {
  return Number(await (await server.fetch("/findings/pid")).text());
}

interface Answer {
  status: number;
  retryAfter: string | null;
}

async function answerOf(res: Promise<Response>): Promise<Answer> {
  const answer = await res;
  await answer.body?.cancel();
  return { status: answer.status, retryAfter: answer.headers.get("retry-after") };
}

function tally(answers: Answer[]): string {
  const by = new Map<number, number>();
  for (const { status } of answers) by.set(status, (by.get(status) ?? 0) + 1);
  return [...by].map(([status, n]) => `${n}×${status}`).join(", ");
}

/** An ingest that accepts connections and never reads or answers them. */
function hungIngest() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const conn of listener) held.push(conn);
    } catch { /* closed */ }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of held) conn.close();
      await accepting;
    },
  };
}

// 160 MiB of envelopes in four waves; the code before the fix held every one of them past the
// request's deadline, some 1.6 MB each.
Deno.test("finding 2: a hung Sentry behind the tunnel: 502 in time, little held", async () => {
  const built = await builtTarget(FILES);
  await using ingest = hungIngest();
  const dsn = `http://publickey@127.0.0.1:${ingest.port}/1`;
  await using server = await startTarget({
    SENTRY_DSN: dsn,
    SENTRY_TUNNEL: "1",
    SENTRY_TRACES_SAMPLE_RATE: "0",
    // The default deadline: each forward then ends on the tunnel's own timeout (5 s), seconds
    // before the deadline. (With a deadline of 3 s, a forward ended 10 % of it before, 0.3 s: a
    // machine under load could stall longer than that, and the deadline fired first.)
    REQUEST_TIMEOUT_MS: "10000",
  }, { root: built.root });
  const pid = await pidOf(server);
  const before = await memoryOf(pid);

  const envelope = new Uint8Array(MIB).fill(0x78);
  envelope.set(new TextEncoder().encode(`${JSON.stringify({ dsn })}\n{"type":"event"}\n`));
  const answers: Promise<Answer>[] = [];
  for (let wave = 0; wave < 4; wave++) {
    for (let i = 0; i < 40; i++) {
      answers.push(answerOf(server.fetch("/_sentry", {
        method: "POST",
        body: envelope,
        signal: AbortSignal.timeout(30_000),
      })));
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const answered = await Promise.all(answers);
  const after = await memoryOf(pid);

  const statuses = tally(answered);
  assert.ok(
    answered.every(({ status }) => status === 502 || status === 503),
    `forwarded and given up on (502), or refused (503): ${statuses}`,
  );
  assert.ok(answered.some(({ status }) => status === 502), `some forwarded: ${statuses}`);
  for (const { status, retryAfter } of answered) {
    if (status === 503) assert.ok(Number(retryAfter) >= 1, "503 says when to come back");
  }
  // No failure: the tunnel's timeout ended each forward before the deadline could.
  assert.equal(server.logs().filter((line) => line.level === "error").length, 0);
  const grew = after.peak - before.rss;
  assert.ok(grew < 150, `the peak grew by ${Math.round(grew)} MB (${statuses})`);
});

/** A call of 99,990 empty objects: 0.89 MB of devalue, within every cap. */
function heavyCall(): FormData {
  return encodeCall([Array.from({ length: 99_990 }, () => ({}))]);
}

async function callMany(server: TestServer, id: string, n: number): Promise<Answer[]> {
  const body = heavyCall();
  return await Promise.all(Array.from({ length: n }, () =>
    answerOf(server.fetch(`/_action/${id}`, {
      method: "POST",
      body,
      headers: { Origin: server.origin, Accept: "application/json" },
      signal: AbortSignal.timeout(60_000),
    }))));
}

function assertRefusedPastBudget(answered: Answer[]) {
  const statuses = tally(answered);
  assert.ok(
    answered.every(({ status }) => status === 200 || status === 503),
    `run (200) or refused (503): ${statuses}`,
  );
  assert.ok(answered.some(({ status }) => status === 200), `some ran: ${statuses}`);
  const refused = answered.filter(({ status }) => status === 503);
  assert.ok(refused.length > 0, `some refused: ${statuses}`);
  for (const { retryAfter } of refused) assert.equal(retryAfter, "1");
}

// Forty calls that each hold some 11 MB while their action waits: 440 MB before the fix.
Deno.test("finding 6: action calls that wait hold no more than the budget", async () => {
  const built = await builtTarget(FILES);
  const { wait } = await built.actionIds();
  await using server = await startTarget({}, { root: built.root });
  const pid = await pidOf(server);
  const before = await memoryOf(pid);
  const answered = await callMany(server, wait, 40);
  const after = await memoryOf(pid);
  assertRefusedPastBudget(answered);
  const grew = after.peak - before.rss;
  assert.ok(grew < 250, `the peak grew by ${Math.round(grew)} MB (${tally(answered)})`);
});

// Eighty such calls to two workers with a 192 MB heap each: before the fix, V8 ran out of memory
// and the whole process ended (exit 133).
Deno.test("finding 6: deno serve --parallel with a 192 MB heap lives through waiting calls", async () => {
  const built = await builtTarget(FILES);
  const { wait } = await built.actionIds();
  const server = await startTarget({ DENO_V8_FLAGS: "--max-old-space-size=192" }, {
    root: built.root,
    args: (
      port,
    ) => ["serve", "-A", "--parallel", "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
  });
  try {
    const answered = await callMany(server, wait, 80);
    assertRefusedPastBudget(answered);
    const res = await server.fetch("/findings/pid");
    assert.equal(res.status, 200, "still serving");
    await res.body?.cancel();
  } finally {
    server.kill(); // `--parallel` can miss a SIGTERM (docs/deploying.md)
    await server.stop();
  }
});
