/**
 * @module
 * A guestbook on Deno KV under load (the framework's test app's wall, `tests/fixture/`, which
 * `bench/run.ts` copies and serves): page reads and signings per second, with p99, under
 * `deno task start` and `deno serve --parallel` (2 workers, one KV file) side by side; and what
 * live pages cost — the resident memory each open event stream adds, and how long a new entry
 * takes to reach all of them. Loopback only; each server gets a KV file of its own in a temp
 * folder. Signings come from a new client address each (`TRUST_PROXY`), so the rate limit is paid
 * for but never refuses.
 */
import { join } from "node:path";
import { rssMb, type Running, start } from "./process.ts";
import { fmt, type Row } from "./report.ts";
import { wrk, type WrkResult } from "./wrk.ts";

export interface KvOptions {
  root: string;
  seconds: number;
  connections: number;
  /** Event streams held open for the memory measure. */
  streams: number;
  progress(message: string): void;
}

export interface KvResults {
  reads: Record<string, WrkResult>;
  signings: Record<string, WrkResult>;
  streams: { count: number; rssBeforeMb: number; rssAfterMb: number; fanOutMs: number };
}

const MODES: Record<string, { args: string[] | ((port: number) => string[]); env: object }> = {
  "deno task start": { args: ["task", "start"], env: {} },
  "deno serve --parallel (2 workers)": {
    args: (
      port,
    ) => ["serve", "-A", "--parallel", "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
    env: { DENO_JOBS: "2" },
  },
};

export async function measureKv(options: KvOptions): Promise<{ rows: Row[]; results: KvResults }> {
  const { root, seconds, connections, progress } = options;
  const reads: Record<string, WrkResult> = {};
  const signings: Record<string, WrkResult> = {};
  let streams: KvResults["streams"] | undefined;
  for (const [mode, { args, env }] of Object.entries(MODES)) {
    const dir = await Deno.makeTempDir({ prefix: "bench-kv-" });
    await using server = await start(root, args, {
      ...env,
      KV_PATH: join(dir, "kv.sqlite3"),
      TRUST_PROXY: "1",
    });
    const body = await signingBody(server.origin);
    for (let i = 0; i < 5; i++) await sign(server.origin, body, `10.0.0.${i}`);
    progress(`KV: guestbook reads, ${mode}`);
    reads[mode] = await wrk(server.origin + "/wall", { seconds, connections });
    progress(`KV: guestbook signings, ${mode}`);
    const script = await signingScript(server.origin, body);
    signings[mode] = await wrk(server.origin + "/wall", { seconds, connections, script });
    await Deno.remove(script);
    if (mode === "deno task start") {
      progress(`KV: ${options.streams} open event streams, ${mode}`);
      streams = await openStreams(server, options.streams, body);
    }
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
  const side = (results: Record<string, WrkResult>) =>
    Object.entries(results).map(([mode, r]) =>
      `${mode}: ${fmt.rps(r.rps)}/s, p99 ${fmt.ms(r.p99Ms)}${
        r.non2xx3xx + r.socketErrors ? ` (${r.non2xx3xx + r.socketErrors} errors)` : ""
      }`
    ).join(" · ");
  const s = streams!;
  const perStreamKb = (s.rssAfterMb - s.rssBeforeMb) * 1024 / s.count;
  const rows: Row[] = [
    { measure: "KV: guestbook page reads", value: side(reads), target: "—" },
    { measure: "KV: guestbook signings (form posts)", value: side(signings), target: "—" },
    {
      measure: `KV: ${s.count} open event streams (deno task start)`,
      value: `${fmt.mb(s.rssBeforeMb)} → ${fmt.mb(s.rssAfterMb)} RSS: ${
        perStreamKb.toFixed(1)
      } KB a stream; a new entry reaches all in ${fmt.ms(s.fanOutMs)}`,
      target: "—",
    },
  ];
  return { rows, results: { reads, signings, streams: s } };
}

/** The guestbook form as a browser without JavaScript posts it, urlencoded. */
async function signingBody(origin: string): Promise<string> {
  const res = await fetch(origin + "/wall");
  if (!res.ok) throw new Error(`GET /wall: ${res.status} (the bench serves tests/fixture/)`);
  const html = await res.text();
  const form = /<form[^>]*action="(\/_action\/[^"]+)"[^>]*>(.*?)<\/form>/s.exec(html);
  if (!form) throw new Error("the guestbook renders no form");
  const fields = new URLSearchParams();
  for (
    const [, name, value = ""] of form[2].matchAll(
      /<input type="hidden" name="([^"]+)"(?: value="([^"]*)")?/g,
    )
  ) {
    fields.append(name, value.replaceAll("&quot;", '"').replaceAll("&amp;", "&"));
  }
  fields.set("name", "Bench");
  fields.set("message", "Signed under load.");
  return `${form[1]}\n${fields}`;
}

function sign(origin: string, body: string, client: string): Promise<void> {
  const [action, fields] = body.split("\n");
  return fetch(origin + action, {
    method: "POST",
    body: fields,
    redirect: "manual",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Origin: origin,
      "X-Forwarded-For": client,
    },
  }).then(async (res) => {
    await res.body?.cancel();
    if (res.status !== 303) throw new Error(`signing answered ${res.status}`);
  });
}

/** A wrk script posting the form, each request from a client address of its own. */
async function signingScript(origin: string, body: string): Promise<string> {
  const [action, fields] = body.split("\n");
  const file = await Deno.makeTempFile({ prefix: "wrk-sign-", suffix: ".lua" });
  await Deno.writeTextFile(
    file,
    `local n = 0
request = function()
  n = n + 1
  local headers = {
    ["Content-Type"] = "application/x-www-form-urlencoded",
    ["Origin"] = ${JSON.stringify(origin)},
    ["X-Forwarded-For"] = string.format("10.%d.%d.%d", math.random(0, 255), (n / 256) % 256, n % 256),
  }
  return wrk.format("POST", ${JSON.stringify(action)}, headers, ${JSON.stringify(fields)})
end
`,
  );
  return file;
}

/**
 * Holds `count` event streams open on raw connections (a page each), reading RSS before and
 * after, then times one signing until every stream has the entry.
 */
async function openStreams(
  server: Running,
  count: number,
  body: string,
): Promise<KvResults["streams"]> {
  const { hostname, port } = new URL(server.origin);
  const settle = async () => {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return await rssMb(server.pid());
  };
  const rssBeforeMb = await settle();
  const encoder = new TextEncoder();
  const connections: Deno.TcpConn[] = [];
  const readers: ReadableStreamDefaultReader<string>[] = [];
  for (let i = 0; i < count; i++) {
    const conn = await Deno.connect({ hostname, port: Number(port) });
    await conn.write(encoder.encode(
      `GET /wall/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n\r\n`,
    ));
    const reader = conn.readable.pipeThrough(new TextDecoderStream()).getReader();
    let head = "";
    while (!head.includes("retry:")) {
      const { value, done } = await reader.read();
      // Anything but the stream (a 404, a 429) ends the bench here rather than wait forever.
      if (done || (head += value).startsWith("HTTP/1.1 ") && !head.startsWith("HTTP/1.1 200")) {
        throw new Error(`stream ${i + 1} of ${count}: ${head.split("\r\n")[0] || "closed"}`);
      }
    }
    connections.push(conn);
    readers.push(reader);
  }
  const rssAfterMb = await settle();
  const began = performance.now();
  const arrived = readers.map(async (reader) => {
    let text = "";
    while (!text.includes("event: post")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("a stream ended before the new post reached it");
      text += value;
    }
  });
  await sign(server.origin, body, "10.255.255.255");
  // Bounded: a post that never arrives ends the bench with an error, not a hang.
  const late = new Promise<never>((_, reject) => {
    const timer = setTimeout(
      () => reject(new Error("the new post missed a stream for 60 s")),
      60_000,
    );
    Promise.allSettled(arrived).then(() => clearTimeout(timer));
  });
  await Promise.race([Promise.all(arrived), late]);
  const fanOutMs = performance.now() - began;
  for (const reader of readers) await reader.cancel().catch(() => {});
  for (const conn of connections) {
    try {
      conn.close();
    } catch { /* closed with its reader */ }
  }
  return { count, rssBeforeMb, rssAfterMb, fanOutMs };
}
