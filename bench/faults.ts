/**
 * @module
 * The full-size scenarios of issue 22, run by hand (too long and too heavy for the suite, whose
 * tests run smaller versions of each): the server's peak resident memory (`VmHWM` of
 * `/proc/<pid>/status`) while
 *  - `tunnel`: 1,120 envelopes of 1 MiB reach the Sentry tunnel (`SENTRY_TUNNEL=1`) in waves of 40
 *    over 9.6 s, while the ingest on 127.0.0.1 accepts connections and never answers;
 *  - `actions`: 150 calls of ~0.89 MB (99,990 values, within every cap) reach an action that waits
 *    8 s;
 *  - `parallel`: 120 such calls reach `deno serve --parallel main.ts` with a 192 MB heap
 *    (`DENO_V8_FLAGS=--max-old-space-size=192`): does the process live?
 *  - `fields`: how long `GET /` takes while four action calls of 1 MiB of `a&a&…` (524,288 fields)
 *    arrive, against alone (the median of 20 each).
 *
 *     deno run -A bench/faults.ts [tunnel|actions|parallel …]
 *     FAULTS_ROOT=/tmp/old deno run -A bench/faults.ts   # a built tree of older code
 *
 * Prints one line per scenario: the statuses the clients got, the server's RSS before, at its
 * peak and after, and its exit status where it died.
 */
import { encodeCall } from "../lib/shared/action_wire.ts";
import { builtCopy } from "../tests/helpers/built_copy.ts";
import { startServer, type TestServer } from "../tests/helpers/server.ts";

/** A built tree of older code to run against; the framework's test app (`tests/fixture/`) if not. */
const ROOT = Deno.env.get("FAULTS_ROOT");
const MIB = 1024 * 1024;

const FILES = {
  "routes/_faults/actions.ts": `"use server";
    export async function wait(...args: unknown[]) {
      await new Promise((resolve) => setTimeout(resolve, 8000));
      return args.length;
    }
  `,
  "routes/api/pid.ts": `export const handler = { GET: () => new Response(String(Deno.pid)) };\n`,
};

interface Memory {
  rss: number;
  hwm: number;
}

async function memoryOf(pid: number): Promise<Memory | undefined> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`).catch(() => undefined);
  if (!status) return undefined;
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

const mb = (n: number | undefined) => n === undefined ? "—" : `${Math.round(n)} MB`;

function counts(statuses: (number | string)[]): string {
  const by = new Map<number | string, number>();
  for (const status of statuses) by.set(status, (by.get(status) ?? 0) + 1);
  return [...by].map(([status, n]) => `${n}×${status}`).join(", ");
}

/** An ingest that accepts connections and never reads or answers them. */
function hungIngest(): { port: number; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  (async () => {
    try {
      for await (const conn of listener) held.push(conn);
    } catch { /* closed */ }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    close() {
      listener.close();
      for (const conn of held) conn.close();
    },
  };
}

async function pidOf(server: TestServer): Promise<number> {
  return Number(await (await server.fetch("/api/pid")).text());
}

/** Samples the server's memory every 100 ms while `work` runs. */
async function measured(pid: number, work: () => Promise<string>): Promise<string> {
  const before = await memoryOf(pid);
  let peak = before?.hwm ?? 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const now = await memoryOf(pid);
      if (now && Number.isFinite(now.hwm)) peak = Math.max(peak, now.hwm);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const outcome = await work();
  sampling = false;
  await sampler;
  const after = await memoryOf(pid);
  // A process that died has no status: its peak is the last one sampled.
  return `${outcome}; RSS before ${mb(before?.rss)}, peak ${mb(after?.hwm ?? peak)}${
    after ? "" : " (at least)"
  }, after ${mb(after?.rss)}`;
}

async function tunnel(root: string): Promise<string> {
  const ingest = hungIngest();
  const dsn = `http://publickey@127.0.0.1:${ingest.port}/1`;
  await using server = await startServer({
    SENTRY_DSN: dsn,
    SENTRY_TUNNEL: "1",
    SENTRY_TRACES_SAMPLE_RATE: "0",
  }, { root });
  const pid = await pidOf(server);
  const header = new TextEncoder().encode(`${JSON.stringify({ dsn })}\n{"type":"event"}\n`);
  const envelope = new Uint8Array(MIB).fill(0x78);
  envelope.set(header);
  try {
    return await measured(pid, async () => {
      const answers: Promise<number | string>[] = [];
      for (let wave = 0; wave < 28; wave++) {
        for (let i = 0; i < 40; i++) {
          answers.push(
            server.fetch("/_sentry", {
              method: "POST",
              body: envelope,
              signal: AbortSignal.timeout(60_000),
            }).then(async (res) => {
              await res.body?.cancel();
              return res.status;
            }, (error) => (error as Error).name),
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 9600 / 28));
      }
      return `tunnel: ${counts(await Promise.all(answers))}`;
    });
  } finally {
    ingest.close();
  }
}

/** 99,990 empty objects: 0.89 MB of devalue, each a value within the caps. */
function heavyCall(): FormData {
  return encodeCall([Array.from({ length: 99_990 }, () => ({}))]);
}

async function callMany(server: TestServer, id: string, n: number) {
  const body = heavyCall();
  const size = new Blob([body.get("$ACTION_ARGS") as string]).size;
  const answers = await Promise.all(Array.from({ length: n }, () =>
    server.fetch(`/_action/${id}`, {
      method: "POST",
      body,
      headers: { Origin: server.origin, Accept: "application/json" },
      signal: AbortSignal.timeout(60_000),
    }).then(async (res) => {
      await res.body?.cancel();
      return res.status;
    }, (error) => (error as Error).name)));
  return `${n} calls of ${(size / 1e6).toFixed(2)} MB: ${counts(answers)}`;
}

async function actionId(root: string): Promise<string> {
  const manifest = await Deno.readTextFile(`${root}/_build/manifest.gen.ts`);
  const id = /\{ id: "([^"]+)", name: "wait"/.exec(manifest)?.[1];
  if (!id) throw new Error("no action `wait` in the copy's manifest");
  return id;
}

async function actions(root: string): Promise<string> {
  await using server = await startServer({}, { root });
  const pid = await pidOf(server);
  const id = await actionId(root);
  return await measured(pid, async () => `actions: ${await callMany(server, id, 150)}`);
}

async function parallel(root: string): Promise<string> {
  const server = await startServer({ DENO_V8_FLAGS: "--max-old-space-size=192" }, {
    root,
    args: (
      port,
    ) => ["serve", "-A", "--parallel", "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
  });
  const pid = await pidOf(server);
  const id = await actionId(root);
  try {
    const outcome = await measured(pid, async () => `parallel: ${await callMany(server, id, 120)}`);
    const alive = await server.fetch("/").then(async (res) => {
      await res.body?.cancel();
      return `alive (GET / ${res.status})`;
    }, () => "dead");
    return `${outcome}; then ${alive}`;
  } finally {
    server.kill();
    const code = await server.stop();
    console.error(`parallel: exit ${code}; stderr: ${server.stderr.slice(-3).join(" | ")}`);
  }
}

async function fields(root: string): Promise<string> {
  await using server = await startServer({}, { root });
  const id = await actionId(root);
  const body = "a&".repeat(512 * 1024);
  const get = async () => {
    const began = performance.now();
    await (await server.fetch("/")).arrayBuffer();
    return performance.now() - began;
  };
  const median = (ms: number[]) => ms.toSorted((a, b) => a - b)[Math.floor(ms.length / 2)];
  const alone: number[] = [];
  const behind: number[] = [];
  for (let round = 0; round < 20; round++) {
    alone.push(await get());
    const floods = Array.from({ length: 4 }, () =>
      server.fetch(`/_action/${id}`, {
        method: "POST",
        body,
        headers: {
          Origin: server.origin,
          "Content-Type": "application/x-www-form-urlencoded",
        },
      }).then((res) => res.body?.cancel()));
    behind.push(await get());
    await Promise.all(floods);
  }
  return `fields: GET / alone ${median(alone).toFixed(1)} ms, behind four 1 MiB a&a& calls ${
    median(behind).toFixed(1)
  } ms (medians of 20)`;
}

const SCENARIOS = { tunnel, actions, parallel, fields };
const chosen = Deno.args.length > 0 ? Deno.args : Object.keys(SCENARIOS);
const root = await builtCopy("faults-bench", FILES, { from: ROOT });
console.log(`root: ${ROOT ?? "the framework's test app"}`);
for (const name of chosen) {
  const scenario = SCENARIOS[name as keyof typeof SCENARIOS];
  if (!scenario) throw new Error(`no scenario ${name}: ${Object.keys(SCENARIOS).join(", ")}`);
  console.log(await scenario(root));
}
