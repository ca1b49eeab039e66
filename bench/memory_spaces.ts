/**
 * @module
 * Where the peak under load is, beside the limit's: the framework's server (`lib/cli/start.ts`, as
 * `deno task start` runs it) and the limit (`bench/bare.ts`, the same `DENO_V8_FLAGS`), loaded at
 * once on `/list` as `bench/memory.ts` loads them (5 s warm-up, then 6 rounds over 30 s, each with
 * its `wrk` on a CPU of its own, trading CPUs every round). Seen from outside, `/proc/PID/smaps` at
 * each one's highest RSS, summed by kind of mapping: V8's heap pages (its 256 KB anonymous
 * mappings: every space, and the pages it pools between collections), the `deno` binary's code,
 * other anonymous memory (glibc's arenas, where V8's compilers and Rust allocate; thread stacks;
 * V8's larger reservations), the C heap, other files. Seen from inside (`bench/heap_probe.ts`,
 * preloaded), V8's spaces at that moment. Not part of `deno task bench`: a tool for finding what
 * differs, on the tree as it is (build it first):
 * `flock /tmp/bench.lock deno run -A bench/memory_spaces.ts`. `BENCH_SENTRY=1`: the server with
 * Sentry on as production runs it (traces at 0.1, Deno's OpenTelemetry settings the launcher adds).
 */
import { fileURLToPath } from "node:url";
import { sentryOtlpEnv } from "../lib/otel/env.ts";
import { pin, rssMb, start, startV8Flags } from "./process.ts";
import { startReceiver } from "./receiver.ts";
import { pairedRatio } from "./report.ts";
import { wrk } from "./wrk.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const flags = await startV8Flags(root);
const probeOut = await Deno.makeTempDir({ prefix: "memory-spaces-" });
// Removed last, once the servers (declared after it) are stopped: their probes write until then.
await using _probeOut = { [Symbol.asyncDispose]: () => Deno.remove(probeOut, { recursive: true }) };
await using receiver = startReceiver();
const withSentry = Deno.env.get("BENCH_SENTRY") === "1";
const sentry: Record<string, string> = withSentry
  ? {
    SENTRY_DSN: receiver.dsn,
    SENTRY_TRACES_SAMPLE_RATE: "0.1",
    ...sentryOtlpEnv(
      { dsn: receiver.dsn, sampleRate: 0.1, environment: "production" },
      () => undefined,
    ),
  }
  : {};

const probed = (name: string, file: string, env: Record<string, string>) =>
  start(root, ["run", "-A", "--preload", "bench/heap_probe.ts", file], {
    DENO_V8_FLAGS: flags,
    PROBE_OUT: `${probeOut}/${name}.json`,
    ...env,
  }, "/list");
await using limit = await probed("limit", "bench/bare.ts", {});
await using framework = await probed("framework", "lib/cli/start.ts", sentry);
const servers = { limit, framework };

/** Resident MB of each kind of mapping in an smaps text. */
function byKind(smaps: string): Record<string, number> {
  const kinds: Record<string, number> = {};
  let kind = "";
  for (const line of smaps.split("\n")) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const kb = (parseInt(mapping[2], 16) - parseInt(mapping[1], 16)) / 1024;
      const path = mapping[3];
      kind = path.endsWith("/deno")
        ? "deno binary"
        : path === "[heap]"
        ? "C heap"
        : path
        ? "other files and [stack]"
        : kb === 256
        ? "V8 heap pages (256 KB)"
        : "other anonymous";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kinds[kind] = (kinds[kind] ?? 0) + Number(rss[1]) / 1024;
  }
  return kinds;
}

const peaks = { limit: { rss: 0, smaps: "" }, framework: { rss: 0, smaps: "" } };
await Promise.all(
  [limit, framework].map((s) => wrk(s.origin + "/list", { seconds: 5, connections: 50 })),
);
const rps: number[] = [];
for (let round = 0; round < 6; round++) {
  const [limitCpu, itCpu] = round % 2 === 0 ? [0, 1] : [1, 0];
  await pin(limit.pid(), limitCpu);
  await pin(framework.pid(), itCpu);
  const sampler = setInterval(async () => {
    for (
      const [name, server] of Object.entries(servers) as [keyof typeof servers, typeof limit][]
    ) {
      const rss = await rssMb(server.pid());
      if (rss > peaks[name].rss) {
        peaks[name] = { rss, smaps: await Deno.readTextFile(`/proc/${server.pid()}/smaps`) };
      }
    }
  }, 250);
  const [a, b] = await Promise.all([
    wrk(framework.origin + "/list", { seconds: 5, connections: 50, cpu: itCpu }),
    wrk(limit.origin + "/list", { seconds: 5, connections: 50, cpu: limitCpu }),
  ]);
  clearInterval(sampler);
  rps.push(a.rps / b.rps);
}

const f = (mb: number) => mb.toFixed(1).padStart(7);
const kinds = { limit: byKind(peaks.limit.smaps), framework: byKind(peaks.framework.smaps) };
const probes = {
  limit: JSON.parse(await Deno.readTextFile(`${probeOut}/limit.json`)),
  framework: JSON.parse(await Deno.readTextFile(`${probeOut}/framework.json`)),
};
console.log(
  `Sentry ${withSentry ? "on (0.1)" : "off"}; req/s beside the limit ` +
    `${pairedRatio(rps).toFixed(2)}, rounds: ` +
    rps.map((r) => r.toFixed(2)).join(" "),
);
console.log(`${"at each one's peak, MB".padEnd(34)}  limit  framework  difference`);
const row = (label: string, a: number, b: number) =>
  console.log(`${label.padEnd(34)}${f(a)}${f(b)}    ${f(b - a)}`);
row("RSS (from outside)", peaks.limit.rss, peaks.framework.rss);
for (const kind of new Set([...Object.keys(kinds.limit), ...Object.keys(kinds.framework)])) {
  row(`  ${kind}`, kinds.limit[kind] ?? 0, kinds.framework[kind] ?? 0);
}
row("V8 heap committed (inside)", probes.limit.heapCommitted, probes.framework.heapCommitted);
for (const space of Object.keys(probes.limit.spaces)) {
  const [a, b] = [probes.limit.spaces[space], probes.framework.spaces[space]];
  if (a.committed || b.committed) row(`  ${space} (used)`, a.used, b.used);
  if (a.committed || b.committed) row(`  ${space} (committed)`, a.committed, b.committed);
}
row("ArrayBuffers' memory (external)", probes.limit.external, probes.framework.external);
row("V8 malloc, highest so far", probes.limit.mallocedPeak, probes.framework.mallocedPeak);
