/**
 * @module
 * What one open event stream holds in the server: the app as `deno task start` serves it (its
 * `DENO_V8_FLAGS`, plus `--expose-gc`), `N` clients on `/guestbook/events` (`STREAMS`, default
 * 2000), reading nothing after the response head or everything (`READ=1`). Before and after, the
 * server collects garbage and reports `Deno.memoryUsage()` (a preloaded probe, on SIGUSR2); the
 * difference per stream is printed in KB. Not part of `deno task bench`: a tool, on the tree as it
 * is (build it first): `deno run -A bench/stream_memory.ts`.
 */
import { fileURLToPath } from "node:url";
import { start, startV8Flags } from "./process.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const streams = Number(Deno.env.get("STREAMS") ?? 2000);
const reading = Deno.env.get("READ") === "1";
const dir = Deno.env.get("PROBE_DIR") ?? await Deno.makeTempDir({ prefix: "stream-memory-" });
const out = `${dir}/probe.json`;
const probe = fileURLToPath(new URL("./stream_probe.ts", import.meta.url));
await using server = await start(root, ["run", "-A", "--preload", probe, "lib/cli/launch.ts"], {
  DENO_V8_FLAGS: `${await startV8Flags(root)},--expose-gc`,
  PROBE_OUT: out,
  PROBE_SNAPSHOTS: Deno.env.get("PROBE_SNAPSHOTS") ?? "",
  KV_PATH: `${dir}/kv.sqlite3`,
  EVENT_STREAMS_MAX: String(streams + 10),
});
const port = Number(new URL(server.origin).port);

interface Figures {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}
async function measure(): Promise<Figures> {
  await Deno.remove(out).catch(() => {});
  Deno.kill(server.pid(), "SIGUSR2");
  for (let i = 0; i < 500; i++) {
    try {
      return JSON.parse(await Deno.readTextFile(out));
    } catch { /* not yet */ }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the probe did not answer");
}

// As a browser's `EventSource` asks (Chromium's headers): Deno's server could compress it.
const request = new TextEncoder().encode(
  `GET /guestbook/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n` +
    `Accept-Encoding: gzip, deflate, br, zstd\r\nCache-Control: no-cache\r\n\r\n`,
);
/** Opens a stream and reads up to its first event (`retry:`); then reads on, or nothing. */
async function open(): Promise<Deno.Conn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(request);
  const buffer = new Uint8Array(4096);
  let text = "";
  while (!text.includes("retry:")) {
    const n = await conn.read(buffer);
    if (n === null) throw new Error(`closed: ${text}`);
    text += new TextDecoder().decode(buffer.subarray(0, n));
  }
  if (!text.startsWith("HTTP/1.1 200")) throw new Error(text.slice(0, 200));
  if (reading) {
    (async () => {
      while (await conn.read(buffer).catch(() => null) !== null);
    })();
  }
  return conn;
}

// Warm: one stream opened and closed, so the route, the feed's code and the watch are loaded.
(await open()).close();
const before = await measure();
const conns: Deno.Conn[] = [];
for (let i = 0; i < streams; i++) conns.push(await open());
const after = await measure();
const kb = (key: keyof Figures) => Math.round((after[key] - before[key]) / streams / 102.4) / 10;
console.log(JSON.stringify({
  streams,
  reading,
  perStreamKB: {
    rss: kb("rss"),
    heapUsed: kb("heapUsed"),
    heapTotal: kb("heapTotal"),
    external: kb("external"),
  },
  beforeMB: Math.round(before.rss / 2 ** 20),
  afterMB: Math.round(after.rss / 2 ** 20),
}));
for (const conn of conns) conn.close();
if (!Deno.env.get("PROBE_DIR")) await Deno.remove(dir, { recursive: true });
