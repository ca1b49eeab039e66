/**
 * @module
 * `deno task bench`: every performance figure of the framework in one run, on loopback, side by
 * side with its target — SSR throughput and latency against a bare `Deno.serve` +
 * `renderToReadableStream` of the same tree (Sentry off, and on as production runs it: the DSN set,
 * traces sampled at 0.1), what telemetry costs against telemetry off (`bench/telemetry.ts`), bytes
 * to the browser, memory under load beside the bare server's, `deno serve --parallel` with one
 * worker and with two, cold start, build time, the guestbook on Deno KV (`bench/kv.ts`), collections
 * (`bench/collections.ts`: writes and indexed reads per second, an update reaching 1,000 open
 * pages), a signed-in page against an anonymous one and a password hash (`bench/users.ts`),
 * compression's bytes and req/s (`bench/compression.ts`), click to first paint prefetched vs cold
 * in Chromium (`bench/navigation.ts`), the shared page cache (`bench/cache.ts`) and the
 * micro-benchmarks. Runs on a copy of the project, so edits made meanwhile cannot skew it. Prints a
 * Markdown table, writes `bench/results/latest.json` (everything) and appends the figures to
 * `bench/results/history.jsonl` (one line a run, committed: a regression shows as a diff).
 *
 * Durations (env): BENCH_SECONDS per wrk run (5), BENCH_ROUNDS of each comparison each way (2, so
 * 4 rounds: each server twice on each CPU), BENCH_CONNECTIONS (50), BENCH_MEMORY_SECONDS (30, in 6
 * rounds), BENCH_RUNS cold starts and builds (5), BENCH_STREAMS event streams held open (1000),
 * BENCH_NAVIGATIONS clicks of each kind under each condition in Chromium (20),
 * BENCH_MICRO=0 skips `deno bench`, BENCH_TELEMETRY=0 the telemetry comparison, BENCH_COLLECTIONS=0
 * the collections.
 */
import { join } from "node:path";
import { copyProject, PROJECT_ROOT } from "../tests/helpers/project_copy.ts";
import { type PageBytes, pageBytes } from "./bytes.ts";
import { examplePages, SSR_PAGES } from "./pages.ts";
import { coldStart, pin, type Running, start, startV8Flags } from "./process.ts";
import { type MemoryRound, memorySideBySide, memorySummary } from "./memory.ts";
import { measureCollections } from "./collections.ts";
import { measureKv } from "./kv.ts";
import { measureUsers } from "./users.ts";
import { measureCompression } from "./compression.ts";
import { measureNavigation } from "./navigation.ts";
import { measureCache } from "./cache.ts";
import { startReceiver } from "./receiver.ts";
import { fmt, pairedRatio, type Row, table } from "./report.ts";
import { type Pair, pair, PRODUCTION_SENTRY, startVariant, VARIANTS } from "./telemetry.ts";
import { wrk, type WrkResult } from "./wrk.ts";

const setting = (name: string, fallback: number) => Number(Deno.env.get(name) ?? fallback);
const SECONDS = setting("BENCH_SECONDS", 5);
const ROUNDS = setting("BENCH_ROUNDS", 2);
const CONNECTIONS = setting("BENCH_CONNECTIONS", 50);
const MEMORY_SECONDS = setting("BENCH_MEMORY_SECONDS", 30);
const RUNS = setting("BENCH_RUNS", 5);
const STREAMS = setting("BENCH_STREAMS", 1000);
const NAVIGATIONS = setting("BENCH_NAVIGATIONS", 20);
const MICRO = Deno.env.get("BENCH_MICRO") !== "0";
const TELEMETRY = Deno.env.get("BENCH_TELEMETRY") !== "0";
const COLLECTIONS = Deno.env.get("BENCH_COLLECTIONS") !== "0";
/** The framework, exactly as `deno task start` runs it. */
const START = ["task", "start"];
/** The limit: the same component tree on a bare `Deno.serve`. */
const BARE = ["run", "-A", "bench/bare.ts"];
/** `deno serve --parallel` on `main.ts`, as a deployment on one machine runs it. */
const SERVE = (port: number) => [
  "serve",
  "-A",
  "--parallel",
  "--host",
  "127.0.0.1",
  `--port=${port}`,
  "main.ts",
];

const TARGET = {
  ratioOff: 0.9,
  /** Sentry on at production's sample rate (0.1). */
  ratioOn: 0.85,
  p99: 1.2,
  islandGzipKb: 75,
  coldStartMs: 150,
  buildMs: 500,
  /** Peak RSS under load against the limit's, measured beside it with the same V8 flags. */
  rssRatio: 1.1,
  /** Two `deno serve --parallel` workers against one, on this 2-core machine (wrk takes a share). */
  parallelScaling: 1.3,
  /** Every request traced (OpenTelemetry, Sentry errors) against telemetry off. */
  ratioTraced: 0.85,
  /** "No growth" between the 2nd and 6th memory rounds (the same CPUs), allowing for GC noise. */
  growth: 0.1,
};

const progress = (message: string) => console.error(`bench: ${message}`);
const median = (values: number[]) => {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle)
    ? (sorted[middle - 1] + sorted[middle]) / 2
    : sorted[Math.floor(middle)];
};
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

await using project = await copyProject();
const copied = new Deno.Command("cp", { args: ["-R", join(PROJECT_ROOT, "bench"), project.root] });
if (!(await copied.output()).success) throw new Error("could not copy bench/");
const root = project.root;
const hasSentry = await Deno.stat(join(root, "lib/sentry")).then(() => true, () => false);
const rows: Row[] = [];

// Build first: it also leaves the fresh build every server below starts from.
progress(`build × ${RUNS + 1}`);
const buildMs: number[] = [];
for (let i = 0; i <= RUNS; i++) {
  const began = performance.now();
  const { success, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["task", "build"],
    cwd: root,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!success) throw new Error(`deno task build failed:\n${new TextDecoder().decode(stderr)}`);
  if (i > 0) buildMs.push(performance.now() - began); // the first run warms the caches
}

await using receiver = startReceiver();
await using running = new AsyncDisposableStack();
const servers: Record<string, Running> = {
  // With the V8 flags `deno task start` gives the framework: the same heap settings for both.
  limit: running.use(await start(root, BARE, { DENO_V8_FLAGS: await startV8Flags(root) }, "/list")),
  off: running.use(await start(root, START)),
};
let sentryNote = hasSentry ? "" : "lib/sentry is not in the tree yet";
if (hasSentry) {
  try {
    servers.on = running.use(await startVariant(root, PRODUCTION_SENTRY(receiver.dsn), receiver));
  } catch (error) {
    sentryNote = `lib/sentry is in the tree but ${(error as Error).message}`;
  }
}
const modes = Object.keys(servers);

// SSR side by side: the limit and a framework server at the same time, each with its wrk on a CPU
// of its own, trading CPUs each round. This machine's speed drifts by a third within a minute;
// measured at once, both see the same drift, and the ratio of each round holds.
interface SideBySide {
  limit: WrkResult;
  it: WrkResult;
}
const ssr: Record<string, Record<string, SideBySide[]>> = {};
const sideBySide = async (
  mode: string,
  path: string,
  seconds: number,
  round: number,
): Promise<SideBySide> => {
  const [limitCpu, itCpu] = round % 2 === 0 ? [0, 1] : [1, 0];
  await pin(servers.limit.pid(), limitCpu);
  await pin(servers[mode].pid(), itCpu);
  const [limit, it] = await Promise.all([
    wrk(servers.limit.origin + path, { seconds, connections: CONNECTIONS, cpu: limitCpu }),
    wrk(servers[mode].origin + path, { seconds, connections: CONNECTIONS, cpu: itCpu }),
  ]);
  return { limit, it };
};
for (const path of Object.keys(SSR_PAGES)) {
  ssr[path] = {};
  for (const mode of modes.filter((m) => m !== "limit")) {
    // Warm-up as long as a round: the servers are measured as they run for hours, JIT and heap
    // settled (the framework's larger code takes longer to get there than the limit's).
    await sideBySide(mode, path, SECONDS, 0);
    const rounds: SideBySide[] = ssr[path][mode] = [];
    for (let round = 0; round < 2 * ROUNDS; round++) {
      progress(
        `SSR ${path}, limit and Sentry ${mode} side by side, round ${round + 1}/${2 * ROUNDS}`,
      );
      rounds.push(await sideBySide(mode, path, SECONDS, round));
    }
  }
}
for (const server of Object.values(servers)) await pin(server.pid(), "all");
const ssrSummary = Object.fromEntries(
  Object.entries(ssr).map(([path, byMode]) => [
    path,
    Object.fromEntries(
      Object.entries(byMode).map(([mode, rounds]) => [mode, {
        rps: mean(rounds.map((r) => r.it.rps)),
        limitRps: mean(rounds.map((r) => r.limit.rps)),
        ratio: pairedRatio(rounds.map((r) => r.it.rps / r.limit.rps)),
        p50Ms: mean(rounds.map((r) => r.it.p50Ms)),
        p99Ms: mean(rounds.map((r) => r.it.p99Ms)),
        limitP50Ms: mean(rounds.map((r) => r.limit.p50Ms)),
        limitP99Ms: mean(rounds.map((r) => r.limit.p99Ms)),
        p99Ratio: pairedRatio(rounds.map((r) => r.it.p99Ms / r.limit.p99Ms)),
        errors: rounds.reduce((n, r) => n + r.it.socketErrors + r.it.non2xx3xx, 0),
      }]),
    ),
  ]),
);
for (const [path, byMode] of Object.entries(ssrSummary)) {
  const waits = path === "/streaming" ? " (both wait 300 ms)" : "";
  for (const [mode, it] of Object.entries(byMode)) {
    const label = `SSR ${path}, Sentry ${mode === "on" ? "on (traces 0.1)" : mode}`;
    const minRatio = mode === "on" ? TARGET.ratioOn : TARGET.ratioOff;
    rows.push({
      measure: `${label}: req/s${waits}`,
      value: `${fmt.rps(it.rps)} vs ${fmt.rps(it.limitRps)} = ${fmt.ratio(it.ratio)}`,
      target: `≥ ${fmt.ratio(minRatio)} limit`,
      pass: it.ratio >= minRatio && it.errors === 0,
    });
    rows.push({
      measure: `${label}: p50 / p99`,
      value: `${fmt.ms(it.p50Ms)} / ${fmt.ms(it.p99Ms)} vs ${fmt.ms(it.limitP50Ms)} / ${
        fmt.ms(it.limitP99Ms)
      }`,
      target: `p99 ≤ ${fmt.ratio(TARGET.p99)} limit`,
      pass: it.p99Ratio <= TARGET.p99,
    });
  }
}
if (sentryNote) rows.push({ measure: "SSR, Sentry on", value: "not measured", target: sentryNote });

// Telemetry against telemetry off, side by side (see bench/telemetry.ts). `/streaming` waits on
// timers, not the CPU: the two pages that do work say what tracing costs.
const telemetry: Record<string, Record<string, Pair[]>> = {};
if (TELEMETRY) {
  for (const variant of VARIANTS(receiver.dsn)) {
    await using it = await startVariant(root, variant, receiver);
    for (const path of ["/list", "/counter"]) {
      const rounds: Pair[] = (telemetry[variant.name] ??= {})[path] = [];
      const load = { seconds: SECONDS, connections: CONNECTIONS };
      await pair(servers.off, it, path, { ...load, round: 0 }); // warm-up
      for (let round = 0; round < 2 * ROUNDS; round++) {
        progress(`telemetry: ${variant.name}, ${path}, round ${round + 1}/${2 * ROUNDS}`);
        rounds.push(await pair(servers.off, it, path, { ...load, round }));
      }
      const rps = pairedRatio(rounds.map((r) => r.rpsRatio));
      const cpu = pairedRatio(rounds.map((r) => r.cpuRatio));
      const traced = variant.name.startsWith("OpenTelemetry");
      rows.push({
        measure: `Telemetry: ${variant.name}, ${path}: req/s and CPU per request vs off`,
        value: `${fmt.ratio(rps)} / ${fmt.ratio(cpu)} (${
          mean(rounds.map((r) => r.cpuUs)).toFixed(0)
        } vs ${mean(rounds.map((r) => r.offCpuUs)).toFixed(0)} µs)`,
        target: traced ? `≥ ${fmt.ratio(TARGET.ratioTraced)}` : "—",
        pass: traced ? rps >= TARGET.ratioTraced && rounds.every((r) => r.errors === 0) : undefined,
      });
    }
  }
  for (const server of Object.values(servers)) await pin(server.pid(), "all");
}

// Bytes to the browser, from the Sentry-on server when there is one (the SDK must stay off the
// critical path) — and the Sentry-off one otherwise.
progress("bytes to the browser");
const bytesServer = servers.on ?? servers.off;
const bytes: (PageBytes & { island: boolean })[] = [];
for (const path of await examplePages(bytesServer.origin)) {
  const html = await (await fetch(bytesServer.origin + path)).text();
  bytes.push({
    ...await pageBytes(bytesServer.origin, path),
    island: html.includes("<app-island"),
  });
}
for (const page of bytes) {
  const total = page.js.gzip + page.css.gzip;
  rows.push({
    measure: `Bytes ${page.path}: JS / CSS (gzip)`,
    value: `${fmt.kb(page.js.raw)} (${fmt.kb(page.js.gzip)}) / ${fmt.kb(page.css.raw)} (${
      fmt.kb(page.css.gzip)
    })`,
    target: page.island ? `≤ ${TARGET.islandGzipKb} KB gzip` : "0 JS",
    pass: page.island ? total <= TARGET.islandGzipKb * 1024 : page.js.raw === 0,
  });
}
// What every page links is `_app`'s; a page that imports no stylesheet of its own adds nothing.
const cssOf = (page: PageBytes) => page.files.filter((file) => file.endsWith(".css"));
const everyPage = cssOf(bytes[0]).filter((file) =>
  bytes.every((page) => cssOf(page).includes(file))
);
const own = bytes.map((page) => ({
  path: page.path,
  files: cssOf(page).filter((file) => !everyPage.includes(file)),
}));
rows.push({
  measure: "CSS a page links beyond _app's (the stylesheets every page links)",
  value: own.filter((page) => page.files.length > 0)
    .map((page) => `${page.path}: ${page.files.length} file(s)`).join(", ") || "none",
  target: "only pages that import CSS",
});
const sentryFiles = bytes.flatMap((page) => page.sentryFiles);
rows.push({
  measure: `Sentry browser SDK on the critical path${servers.on ? "" : " (Sentry off)"}`,
  value: sentryFiles.length ? [...new Set(sentryFiles)].join(", ") : "none",
  target: "never",
  pass: sentryFiles.length === 0,
});

// Memory: each framework server beside the limit, both loaded at once on the 100-item page, their
// peak RSS compared (bench/memory.ts).
const memory: Record<string, MemoryRound[]> = {};
for (const mode of modes.filter((m) => m !== "limit")) {
  progress(`memory, Sentry ${mode} beside the limit (${MEMORY_SECONDS} s)`);
  memory[mode] = await memorySideBySide(servers.limit, servers[mode], {
    seconds: MEMORY_SECONDS,
    rounds: 6,
    connections: CONNECTIONS,
  });
  const it = memorySummary(memory[mode]);
  rows.push({
    measure:
      `Memory /list, Sentry ${mode}: peak RSS in ${MEMORY_SECONDS} s at ${CONNECTIONS} conn., beside the limit`,
    value: `${fmt.mb(it.peakMb)} vs ${fmt.mb(it.limitPeakMb)} = ${fmt.ratio(it.ratio)} (req/s ${
      fmt.ratio(it.rpsRatio)
    })`,
    target: `≤ ${fmt.ratio(TARGET.rssRatio)} limit`,
    pass: it.ratio <= TARGET.rssRatio,
  });
  rows.push({
    measure: `Memory /list, Sentry ${mode}: median RSS, round 2 → 5`,
    value: `${fmt.mb(memory[mode][1].medianMb)} → ${fmt.mb(memory[mode][4].medianMb)} (${
      (it.growth * 100).toFixed(1)
    }%)`,
    target: `≤ +${TARGET.growth * 100}%`,
    pass: it.growth <= TARGET.growth,
  });
}
for (const server of Object.values(servers)) await server.stop();

// `deno serve --parallel`: one worker against two, loaded in turn (never at once), round after
// round, so that the machine's drift between two runs does not pass for scaling.
const parallel: Record<string, WrkResult[]> = { "1": [], "2": [] };
{
  await using one = await start(root, SERVE, { DENO_JOBS: "1" });
  await using two = await start(root, SERVE, { DENO_JOBS: "2" });
  const servers = { "1": one, "2": two };
  for (const server of [one, two]) {
    await wrk(server.origin + "/list", { seconds: SECONDS, connections: CONNECTIONS }); // warm-up
  }
  for (let round = 0; round < 2 * ROUNDS; round++) {
    progress(`deno serve --parallel, 1 and 2 workers in turn, round ${round + 1}/${2 * ROUNDS}`);
    for (const jobs of round % 2 === 0 ? ["1", "2"] as const : ["2", "1"] as const) {
      const url = servers[jobs].origin + "/list";
      parallel[jobs].push(await wrk(url, { seconds: SECONDS, connections: CONNECTIONS }));
    }
  }
}
const rps = (jobs: "1" | "2") => median(parallel[jobs].map((run) => run.rps));
const scaling = median(parallel["1"].map((run, i) => parallel["2"][i].rps / run.rps));
rows.push({
  measure: "`deno serve --parallel` /list: 2 workers vs 1",
  value: `${fmt.rps(rps("2"))} vs ${fmt.rps(rps("1"))} = ${fmt.ratio(scaling)}`,
  target: `≥ ${fmt.ratio(TARGET.parallelScaling)}`,
  pass: scaling >= TARGET.parallelScaling,
});

progress(`cold start × ${RUNS}, and the limit's`);
// Both to a first 200 on the same page, one after the other: the limit loads React and renders it
// too, which is most of a start on this machine.
const coldMs: number[] = [];
const limitColdMs: number[] = [];
for (let i = 0; i < RUNS; i++) {
  coldMs.push(await coldStart(root, START, "/list"));
  limitColdMs.push(await coldStart(root, BARE, "/list"));
}
rows.push({
  measure: `Cold start to first 200 on /list (median of ${RUNS})`,
  value: `${fmt.ms(median(coldMs))} (limit ${fmt.ms(median(limitColdMs))})`,
  target: `≤ ${TARGET.coldStartMs} ms`,
  pass: median(coldMs) <= TARGET.coldStartMs,
});
rows.push({
  measure: `\`deno task build\` (median of ${RUNS})`,
  value: fmt.ms(median(buildMs)),
  target: `≤ ${TARGET.buildMs} ms`,
  pass: median(buildMs) <= TARGET.buildMs,
});

const kv = await measureKv({
  root,
  seconds: SECONDS,
  connections: CONNECTIONS,
  streams: STREAMS,
  progress,
});
rows.push(...kv.rows);

const collections = COLLECTIONS
  ? await measureCollections({ seconds: SECONDS, streams: STREAMS, progress })
  : undefined;
rows.push(...collections?.rows ?? []);

// Sign-in is the example's (`/login`, `users:add`): the test app above has neither.
await using example = await copyProject({ from: PROJECT_ROOT });
const users = await measureUsers({
  root: example.root,
  seconds: SECONDS,
  connections: CONNECTIONS,
  rounds: ROUNDS,
  progress,
});
rows.push(...users.rows);

const compression = await measureCompression({
  root,
  seconds: SECONDS,
  connections: CONNECTIONS,
  rounds: ROUNDS,
  progress,
});
rows.push(...compression.rows);

// The example's too: its stylesheet is the build's (immutable), and it has view transitions.
const navigation = await measureNavigation({ root: example.root, trials: NAVIGATIONS, progress });
rows.push(...navigation.rows);

// The shared page cache: a cached page against the limit, and revalidateTag across workers.
const cache = await measureCache({
  seconds: SECONDS,
  connections: CONNECTIONS,
  rounds: ROUNDS,
  sentry: Deno.env.get("BENCH_CACHE_SENTRY") !== "0",
  progress,
});
rows.push(...cache.rows);

let micro: { name: string; avgNs: number }[] = [];
if (MICRO) {
  progress("deno bench");
  const { success, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["bench", "-A", "--json", "bench/"],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!success) throw new Error(`deno bench failed:\n${new TextDecoder().decode(stderr)}`);
  const report = JSON.parse(new TextDecoder().decode(stdout)) as {
    benches: { name: string; results: { ok?: { avg: number } }[] }[];
  };
  micro = report.benches.map((b) => ({ name: b.name, avgNs: b.results[0].ok?.avg ?? NaN }));
  for (const bench of micro) {
    rows.push({ measure: `Micro: ${bench.name}`, value: fmt.ns(bench.avgNs), target: "—" });
  }
}

const output = table(rows);
console.log(output);
const results = {
  date: new Date().toISOString(),
  machine: {
    cpus: navigator.hardwareConcurrency,
    loadavg: Deno.loadavg(),
    deno: Deno.version.deno,
  },
  settings: { SECONDS, ROUNDS, CONNECTIONS, MEMORY_SECONDS, RUNS, STREAMS, NAVIGATIONS },
  targets: TARGET,
  sentry: {
    measured: Boolean(servers.on),
    note: sentryNote,
    received: Object.fromEntries(receiver.items),
  },
  ssr,
  ssrSummary,
  telemetry,
  bytes,
  memory,
  parallel,
  coldStartMs: coldMs,
  limitColdStartMs: limitColdMs,
  buildMs,
  kv: kv.results,
  collections: collections?.results,
  users: users.results,
  compression: compression.results,
  navigation: navigation.results,
  cache: cache.results,
  micro,
  table: output,
  misses: rows.filter((row) => row.pass === false).map((row) => row.measure),
};
const resultsDir = join(PROJECT_ROOT, "bench/results");
await Deno.mkdir(resultsDir, { recursive: true });
await Deno.writeTextFile(join(resultsDir, "latest.json"), JSON.stringify(results, null, 2) + "\n");
// One line a run, figure by figure: the diff of a commit that adds one shows what moved.
const line = {
  date: results.date,
  commit: await headCommit(),
  loadavg: results.machine.loadavg,
  figures: Object.fromEntries(
    rows.map((row) => [row.measure, row.pass === undefined ? row.value : [row.value, row.pass]]),
  ),
};
await Deno.writeTextFile(join(resultsDir, "history.jsonl"), JSON.stringify(line) + "\n", {
  append: true,
});
progress(
  `wrote bench/results/latest.json and a line of history.jsonl; ${results.misses.length} target(s) missed`,
);

async function headCommit(): Promise<string | null> {
  const { success, stdout } = await new Deno.Command("git", {
    args: ["rev-parse", "--short", "HEAD"],
    cwd: PROJECT_ROOT,
    stdout: "piped",
    stderr: "null",
  }).output().catch(() => ({ success: false, stdout: new Uint8Array() }));
  return success ? new TextDecoder().decode(stdout).trim() : null;
}
