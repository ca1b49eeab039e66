/**
 * @module
 * What Sentry costs as production runs it (the DSN set, traces sampled at 0.1), and nothing else:
 * the two figures of `deno task bench` that say so, in a few minutes instead of the whole bench.
 * CPU and req/s against telemetry off on `/list` and `/counter` (`bench/telemetry.ts`'s pairs), then
 * peak RSS beside the bare server on `/list` (`bench/memory.ts`), for Sentry off and on. Beside the
 * CPU pairs, the floor no app can go below: the limit (`bench/bare.ts`) with Deno's OpenTelemetry
 * at 0.1 against itself without, since Deno starts, fills and ends a span for every request, sampled
 * or not. Runs on the tree as it is (build it first):
 * `flock /tmp/bench.lock deno run -A bench/sentry_cost.ts`.
 * Env: BENCH_SECONDS (5) per round, BENCH_ROUNDS (2) pairs of rounds per page (as `bench/run.ts`:
 * each server twice on each CPU), BENCH_MEMORY_SECONDS (30, in 6 rounds), BENCH_CONNECTIONS (50),
 * BENCH_SKIP (`cpu`, `deno` — the floor — or `memory`).
 */
import { fileURLToPath } from "node:url";
import { memorySideBySide, memorySummary } from "./memory.ts";
import { sentryOtlpEnv } from "../lib/otel/env.ts";
import { pin, type Running, start, startV8Flags } from "./process.ts";
import { pairedRatio, pairRounds } from "./report.ts";
import { startReceiver } from "./receiver.ts";
import { pair, PRODUCTION_SENTRY, startVariant } from "./telemetry.ts";

const setting = (name: string, fallback: number) => Number(Deno.env.get(name) ?? fallback);
const SECONDS = setting("BENCH_SECONDS", 5);
// Each server on each CPU in turn: checked here, not after the last round (pairedRatio).
const ROUNDS = pairRounds(setting("BENCH_ROUNDS", 2));
const MEMORY_SECONDS = setting("BENCH_MEMORY_SECONDS", 30);
const CONNECTIONS = setting("BENCH_CONNECTIONS", 50);
const SKIP = Deno.env.get("BENCH_SKIP");

const root = fileURLToPath(new URL("../", import.meta.url));
const x = (ratio: number) => `${ratio.toFixed(2)}×`;

await using receiver = startReceiver();
await using off = await start(root, ["task", "start"]);
await using on = await startVariant(root, PRODUCTION_SENTRY(receiver.dsn), receiver);

/** `ROUNDS` of `a` (off) and `b` (on) on each page, with a line per page. */
async function cpuPairs(a: Running, b: Running, label: string): Promise<void> {
  for (const path of ["/list", "/counter"]) {
    const load = { seconds: SECONDS, connections: CONNECTIONS };
    await pair(a, b, path, { ...load, round: 0 }); // warm-up
    const rounds = [];
    for (const round of ROUNDS) rounds.push(await pair(a, b, path, { ...load, round }));
    const rps = rounds.map((r) => r.rpsRatio);
    const cpu = rounds.map((r) => r.cpuRatio);
    console.log(
      `${label}, ${path}: req/s ${x(pairedRatio(rps))} (${rps.map(x).join(" ")}), ` +
        `CPU/request ${x(pairedRatio(cpu))} (${cpu.map(x).join(" ")}); µs ` +
        rounds.map((r) => `${r.cpuUs.toFixed(0)}/${r.offCpuUs.toFixed(0)}`).join(" ") +
        `; errors ${rounds.reduce((n, r) => n + r.errors, 0)}`,
    );
  }
  for (const server of [a, b]) await pin(server.pid(), "all");
}

if (SKIP !== "cpu") await cpuPairs(off, on, "Sentry on (0.1) vs off");

if (SKIP !== "cpu" && SKIP !== "deno") {
  // The launcher's own settings for Deno's OpenTelemetry, pointed at the same receiver.
  const otel = sentryOtlpEnv(
    { dsn: receiver.dsn, sampleRate: 0.1, environment: "production" },
    () => undefined,
  );
  const flags = { DENO_V8_FLAGS: await startV8Flags(root) };
  const bare = ["run", "-A", "bench/bare.ts"];
  await using limit = await start(root, bare, flags, "/list");
  await using traced = await start(root, bare, { ...flags, ...otel }, "/list");
  await cpuPairs(limit, traced, "The limit with Deno's OpenTelemetry (0.1) vs without");
}

if (SKIP !== "memory") {
  const flags = await startV8Flags(root);
  await using limit = await start(
    root,
    ["run", "-A", "bench/bare.ts"],
    { DENO_V8_FLAGS: flags },
    "/list",
  );
  for (const [mode, server] of [["off", off], ["on", on]] as const) {
    const rounds = await memorySideBySide(limit, server, {
      seconds: MEMORY_SECONDS,
      rounds: 6,
      connections: CONNECTIONS,
    });
    const it = memorySummary(rounds);
    console.log(
      `Memory /list, Sentry ${mode}: peak ${it.peakMb.toFixed(0)} vs ${
        it.limitPeakMb.toFixed(0)
      } MB = ` +
        `${x(it.ratio)} (req/s ${x(it.rpsRatio)}, growth ${(it.growth * 100).toFixed(1)}%; peaks ` +
        rounds.map((r) => `${r.peakMb.toFixed(0)}/${r.limitPeakMb.toFixed(0)}`).join(" ") + ")",
    );
  }
}
