/**
 * @module
 * Two versions of the framework compared on memory: the test app on each of two trees (this
 * project, a worktree of another commit), built, each run by `deno task start` beside one limit
 * (`bench/bare.ts`, the same `DENO_V8_FLAGS`) as `bench/memory.ts` measures it (5 s warm-up, then 5
 * rounds over 30 s), the two in turn, the order swapped each time. A ratio of peaks moves by 0.1x
 * from one run to the next on a shared machine; measured in turn beside the same limit, the two
 * trees see the same drift. Prints each run and the medians:
 * `flock /tmp/bench.lock deno run -A bench/memory_trees.ts <tree A> <tree B> [runs (3)]`.
 * `BENCH_SENTRY=1`: both with Sentry on as production runs it (`PRODUCTION_SENTRY`, traces at
 * 0.1, sent to a stand-in on loopback); the process measured is then the launcher's child.
 */
import { join } from "node:path";
import { PROJECT_ROOT } from "../tests/helpers/project_copy.ts";
import { memorySideBySide, memorySummary } from "./memory.ts";
import { type Running, start, startV8Flags } from "./process.ts";
import { startReceiver } from "./receiver.ts";
import { PRODUCTION_SENTRY, startVariant } from "./telemetry.ts";
import { wrk } from "./wrk.ts";

const [treeA, treeB, runs = "3"] = Deno.args;
if (!treeA || !treeB) throw new Error("usage: bench/memory_trees.ts <tree A> <tree B> [runs]");
const NOT_COPIED = new Set([".git", "_build", "node_modules", ".data", "README.md"]);
const median = (values: number[]) => values.toSorted((a, b) => a - b)[values.length >> 1];

/** The test app on `tree`'s framework (as `copyProject` makes it), built; removed on dispose. */
async function builtTestApp(tree: string): Promise<AsyncDisposable & { root: string }> {
  const root = await Deno.makeTempDir({ prefix: "memory-trees-" });
  const fixture = join(tree, "tests/fixture");
  const sources = [
    ...["deno.json", "deno.lock", "main.ts", "lib", "bench"].map((name) => join(tree, name)),
    ...[...Deno.readDirSync(fixture)].filter((e) => !NOT_COPIED.has(e.name))
      .map((e) => join(fixture, e.name)),
  ];
  for (const source of sources) {
    const copied = await new Deno.Command("cp", { args: ["-R", source, root] }).output();
    if (!copied.success) throw new Error(`could not copy ${source}`);
  }
  await Deno.symlink(join(PROJECT_ROOT, "node_modules"), join(root, "node_modules"));
  const built = await new Deno.Command(Deno.execPath(), { args: ["task", "build"], cwd: root })
    .output();
  if (!built.success) throw new Error(`deno task build failed for ${tree}`);
  return { root, [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }) };
}

await using stack = new AsyncDisposableStack();
const a = stack.use(await builtTestApp(treeA));
const b = stack.use(await builtTestApp(treeB));
const limit = stack.use(
  await start(a.root, ["run", "-A", "bench/bare.ts"], {
    DENO_V8_FLAGS: await startV8Flags(a.root),
  }, "/list"),
);
const receiver = Deno.env.get("BENCH_SENTRY") === "1" ? stack.use(startReceiver()) : undefined;
const serve = (root: string) =>
  receiver
    ? startVariant(root, PRODUCTION_SENTRY(receiver.dsn), receiver)
    : start(root, ["task", "start"], {}, "/list");
const servers: Record<string, Running> = {
  A: stack.use(await serve(a.root)),
  B: stack.use(await serve(b.root)),
};
const results: Record<string, { ratio: number; rps: number }[]> = { A: [], B: [] };
for (let run = 0; run < Number(runs); run++) {
  for (const name of run % 2 === 0 ? ["A", "B"] : ["B", "A"]) {
    const server = servers[name];
    await Promise.all(
      [limit, server].map((s) => wrk(s.origin + "/list", { seconds: 5, connections: 50 })),
    );
    const it = memorySummary(
      await memorySideBySide(limit, server, { seconds: 30, rounds: 6, connections: 50 }),
    );
    results[name].push({ ratio: it.ratio, rps: it.rpsRatio });
    console.log(
      `run ${run + 1}, ${name}: peak ${it.peakMb.toFixed(0)} vs ${
        it.limitPeakMb.toFixed(0)
      } MB = ` +
        `${it.ratio.toFixed(2)}× (req/s ${it.rpsRatio.toFixed(2)}×)`,
    );
  }
}
for (const [name, tree] of [["A", treeA], ["B", treeB]]) {
  const r = results[name];
  console.log(
    `${name} (${tree}): median peak ${median(r.map((x) => x.ratio)).toFixed(2)}× the limit's, ` +
      `req/s ${median(r.map((x) => x.rps)).toFixed(2)}×`,
  );
}
