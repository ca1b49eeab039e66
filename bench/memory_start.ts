/**
 * @module
 * The memory figure of `deno task bench` alone, in about two minutes, for the two ways a deploy
 * starts the server: `deno task start` after `deno task build` (what `bench/run.ts` measures) and
 * `deno task start` on a tree with no build (a fresh clone, or sources changed since), which builds
 * before it serves. Each is loaded on `/list` beside the limit (`bench/bare.ts`, the same
 * `DENO_V8_FLAGS`) as `bench/memory.ts` does it; the figure is the RSS of the serving process — the
 * task runner's child, or the launcher's when it runs the server in a process of its own (`Running.pid`).
 * Also the idle RSS of each after 30 requests. Each pair is warmed up for 5 s first. Runs on a copy of the framework's test app, as the
 * whole bench does: `flock /tmp/bench.lock deno run -A bench/memory_start.ts`.
 * Env: BENCH_MEMORY_SECONDS (30, in 6 rounds), BENCH_CONNECTIONS (50).
 */
import { join } from "node:path";
import { copyProject, PROJECT_ROOT } from "../tests/helpers/project_copy.ts";
import { memorySideBySide, memorySummary } from "./memory.ts";
import { rssMb, type Running, start, startV8Flags } from "./process.ts";
import { wrk } from "./wrk.ts";

const setting = (name: string, fallback: number) => Number(Deno.env.get(name) ?? fallback);
const SECONDS = setting("BENCH_MEMORY_SECONDS", 30);
const CONNECTIONS = setting("BENCH_CONNECTIONS", 50);
const x = (ratio: number) => `${ratio.toFixed(2)}×`;
const WARM_UP = { seconds: 5, connections: CONNECTIONS };

await using project = await copyProject();
const copied = new Deno.Command("cp", { args: ["-R", join(PROJECT_ROOT, "bench"), project.root] });
if (!(await copied.output()).success) throw new Error("could not copy bench/");
const root = project.root;

// First the server that finds no build (it builds, then serves), then the limit and a server that
// finds that build in place.
await using built = new AsyncDisposableStack();
const servers: Record<string, Running> = {};
servers["built as it started"] = built.use(await start(root, ["task", "start"], {}, "/list"));
const limit = built.use(
  await start(root, ["run", "-A", "bench/bare.ts"], {
    DENO_V8_FLAGS: await startV8Flags(root),
  }, "/list"),
);
servers["after deno task build"] = built.use(await start(root, ["task", "start"], {}, "/list"));

const idle = async (server: Running) => {
  for (let i = 0; i < 30; i++) await (await fetch(server.origin + "/list")).text();
  return `${(await rssMb(server.pid())).toFixed(0)} MB`;
};
console.log(`Idle after 30 requests: limit ${await idle(limit)}`);
for (const [name, server] of Object.entries(servers)) {
  console.log(`  deno task start, ${name}: ${await idle(server)}`);
}
for (const [name, server] of Object.entries(servers).toReversed()) {
  // Warmed up first, as the whole bench's SSR rounds warm its servers up before it measures memory:
  // a server's first seconds under load (its heap still sized for idling) are not how it runs.
  await Promise.all([limit, server].map((s) => wrk(s.origin + "/list", WARM_UP)));
  const rounds = await memorySideBySide(limit, server, {
    seconds: SECONDS,
    rounds: 6,
    connections: CONNECTIONS,
  });
  const it = memorySummary(rounds);
  console.log(
    `Memory /list, deno task start ${name}: peak ${it.peakMb.toFixed(0)} vs ${
      it.limitPeakMb.toFixed(0)
    } MB = ${x(it.ratio)} (req/s ${x(it.rpsRatio)}, growth ${(it.growth * 100).toFixed(1)}%; ` +
      `peaks ${rounds.map((r) => `${r.peakMb.toFixed(0)}/${r.limitPeakMb.toFixed(0)}`).join(" ")})`,
  );
}
