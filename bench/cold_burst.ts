/**
 * @module
 * A cold burst on the shared page cache (docs/caching.md, "A burst of first requests"): 50
 * concurrent first requests, each on a connection of its own, of a cached page no process holds
 * yet - the test app's `/list` behind a route of its own, `/cold/<round>`, a new page each round.
 * Per burst: how many times the page rendered (a KV counter its handler adds to), the time until
 * every request was answered, the median and the slowest request, and the CPU time the server
 * spent on it (utime + stime in /proc, read 300 ms after the burst: writes to KV go on after the
 * answers). On `deno task start` (one process) and `deno serve --parallel` (2 workers, one KV file).
 *
 * `deno run -A bench/cold_burst.ts [--before=<git ref>] [--rounds=N]`: with a ref, the same on a
 * copy whose `lib/` is that commit's, its bursts alternating with this tree's in one run, so the
 * two are side by side. Run under the bench lock (`flock /tmp/bench.lock ...`).
 */
import { join } from "node:path";
import { copyProject, type ProjectCopy } from "../tests/helpers/project_copy.ts";
import { type Running, start } from "./process.ts";
import { fmt, median, type Row, table } from "./report.ts";

const BURST = 50;

const FILES = {
  "routes/cold/[n].tsx": `import { kvOf } from "shell/data";
    import List from "../list.tsx";
    export const cache = { maxAge: 3600 };
    export const handler = {
      async GET(_req, ctx) {
        await kvOf(ctx).atomic().sum(["cold-renders", ctx.params.n], 1n).commit();
        return ctx.render();
      },
    };
    export default List;`,
  "routes/api/cold-renders/[n].ts": `import { kvOf } from "shell/data";
    export const handler = {
      async GET(_req, ctx) {
        const renders = (await kvOf(ctx).get(["cold-renders", ctx.params.n])).value;
        return Response.json({ renders: Number(renders?.value ?? 0n) });
      },
    };`,
};

interface Burst {
  renders: number;
  /** Until the last of the burst was answered, ms. */
  allMs: number;
  p50Ms: number;
  maxMs: number;
  /** The server's CPU time for the burst, ms. */
  cpuMs: number;
}

/** A built copy of this tree, or with `lib/` as of `ref`. */
async function builtTree(ref?: string): Promise<ProjectCopy> {
  const project = await copyProject();
  for (const [path, text] of Object.entries(FILES)) await project.write(path, text);
  if (ref) {
    await Deno.remove(join(project.root, "lib"), { recursive: true });
    const archive = new Deno.Command("sh", {
      args: ["-c", `git archive "$0" lib | tar -x -C "$1"`, ref, project.root],
    });
    if (!(await archive.output()).success) throw new Error(`git archive ${ref} lib failed`);
  }
  const built = await new Deno.Command(Deno.execPath(), {
    args: ["task", "build"],
    cwd: project.root,
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (!built.success) throw new Error(`deno task build failed on ${ref ?? "this tree"}`);
  return project;
}

/** User and system CPU time of process `pid` and its threads, ms. */
async function cpuMs(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
}

async function burst(server: Running, n: number): Promise<Burst> {
  using client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  const pid = server.pid();
  const cpuBefore = await cpuMs(pid);
  const began = performance.now();
  const times = await Promise.all(Array.from({ length: BURST }, async () => {
    const sent = performance.now();
    const res = await fetch(`${server.origin}/cold/${n}`, { client });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`/cold/${n}: ${res.status}`);
    return performance.now() - sent;
  }));
  const allMs = performance.now() - began;
  await new Promise((resolve) => setTimeout(resolve, 300));
  const cpu = await cpuMs(pid) - cpuBefore;
  const res = await fetch(`${server.origin}/api/cold-renders/${n}`, { client });
  const { renders } = await res.json();
  return { renders, allMs, p50Ms: median(times), maxMs: Math.max(...times), cpuMs: cpu };
}

/** Each server measured: its name, `deno`'s arguments, and `DENO_JOBS`. */
const SETUPS: [string, string[] | ((port: number) => string[]), string][] = [
  ["deno task start", ["task", "start"], "1"],
  [
    "deno serve --parallel, 2 workers",
    (port) => ["serve", "-A", "--parallel", "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
    "2",
  ],
];

async function main() {
  const ref = Deno.args.find((arg) => arg.startsWith("--before="))?.slice("--before=".length);
  const rounds = Number(
    Deno.args.find((arg) => arg.startsWith("--rounds="))?.slice("--rounds=".length) ?? 10,
  );
  const trees: [string, ProjectCopy][] = [["this tree", await builtTree()]];
  if (ref) trees.unshift([`lib/ of ${ref}`, await builtTree(ref)]);
  const rows: Row[] = [];
  try {
    for (const [setup, args, jobs] of SETUPS) {
      const servers: [string, Running][] = [];
      for (const [name, { root }] of trees) {
        const store = await Deno.makeTempDir({ prefix: "bench-cold-" });
        servers.push([
          name,
          await start(root, args, (port) => ({
            APP_ORIGIN: `http://127.0.0.1:${port}`,
            KV_PATH: join(store, "kv.sqlite3"),
            DENO_JOBS: jobs,
          }), "/list"),
        ]);
      }
      try {
        const results = new Map<string, Burst[]>(servers.map(([name]) => [name, []]));
        // Round -1 warms each server (the route's module, KV) and is not counted.
        for (let round = -1; round < rounds; round++) {
          const order = round % 2 === 0 ? servers : servers.toReversed();
          for (const [name, server] of order) {
            const result = await burst(server, round + 1);
            if (round >= 0) results.get(name)!.push(result);
            console.error(
              `${setup}, ${name}, round ${round + 1}: ${result.renders} renders, all in ${
                fmt.ms(result.allMs)
              }, p50 ${fmt.ms(result.p50Ms)}, max ${fmt.ms(result.maxMs)}, CPU ${
                fmt.ms(result.cpuMs)
              }`,
            );
          }
        }
        for (const [name, bursts] of results) {
          const of = (pick: (burst: Burst) => number) => median(bursts.map(pick));
          rows.push({
            measure:
              `Cold burst, ${BURST} first requests, ${setup}, ${name}: renders / all answered / p50 / max / server CPU (medians of ${rounds})`,
            value: `${of((b) => b.renders)} / ${fmt.ms(of((b) => b.allMs))} / ${
              fmt.ms(of((b) => b.p50Ms))
            } / ${fmt.ms(of((b) => b.maxMs))} / ${fmt.ms(of((b) => b.cpuMs))}`,
            target: "1 render",
            pass: Math.max(...bursts.map((b) => b.renders)) === 1,
          });
        }
      } finally {
        for (const [, server] of servers) await server.stop();
      }
    }
  } finally {
    for (const [, tree] of trees) await tree[Symbol.asyncDispose]();
  }
  console.log(table(rows));
}

if (import.meta.main) await main();
