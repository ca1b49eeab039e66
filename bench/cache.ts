/**
 * @module
 * The shared page cache (docs/caching.md), measured on a copy of the project with two routes of
 * its own: `/list-cached` (the example's `/list` with `cache`) and the tag test's page and
 * publisher (tests/process/page_cache_test.ts).
 *
 * - Throughput and p99: the cached `/list` served by `deno task start` against the limit rendering
 *   `/list` (`bench/bare.ts`), side by side as bench/run.ts does SSR: both loaded at once, each
 *   server and its `wrk` on a CPU of their own, trading CPUs every round.
 * - Compression on hits: the same cached page asked for with a browser's `Accept-Encoding` and
 *   without, in alternate runs of the same server, side by side in one run: what a compressed hit
 *   costs against an uncompressed one (it sends the coding the page holds: nothing is compressed).
 * - Invalidation: `deno serve --parallel` (2 workers) on one KV file; after `revalidateTag` returns
 *   on one worker, how long until every worker has answered with the new page — two pollers on
 *   fresh connections (the kernel spreads them over the workers), each worker's first new answer
 *   timed; the latest of the two is the round's figure.
 */
import { join } from "node:path";
import { CACHED_FILES } from "../tests/process/page_cache_test.ts";
import { copyProject } from "../tests/helpers/project_copy.ts";
import { pin, start, startV8Flags } from "./process.ts";
import { fmt, type Row } from "./report.ts";
import { wrk, type WrkResult } from "./wrk.ts";

export interface CacheOptions {
  seconds: number;
  connections: number;
  rounds: number;
  /** Measure `revalidateTag` across workers too (the default); false: throughput only. */
  invalidation?: boolean;
  progress(message: string): void;
}

export const CACHE_TARGET = {
  /** A cached page against the limit rendering it, req/s. */
  ratio: 3,
  /** p99 of a cached page against the limit's. */
  p99: 1,
  /** Every `deno serve --parallel` worker serves the new page after `revalidateTag`, ms. */
  invalidationMs: 100,
};

/** Rounds of the invalidation measure: its figure is the worst of them. */
const INVALIDATION_ROUNDS = 20;

/** What Chromium sends: the page cache answers it with gzip (compression.ts). */
const BROWSER_ENCODINGS = { "Accept-Encoding": "gzip, deflate, br, zstd" };

const FILES = {
  ...CACHED_FILES,
  "routes/list-cached.tsx": `export { default } from "./list.tsx";
    export const cache = { maxAge: 3600 };`,
};

export async function measureCache(options: CacheOptions) {
  const { seconds, connections, rounds, progress } = options;
  await using project = await copyProject();
  const { root } = project;
  for (const [path, text] of Object.entries(FILES)) {
    await Deno.writeTextFile(join(root, path), text);
  }
  const cp = new Deno.Command("cp", { args: ["-R", join(Deno.cwd(), "bench"), root] });
  if (!(await cp.output()).success) throw new Error("could not copy bench/");
  const built = await new Deno.Command(Deno.execPath(), {
    args: ["task", "build"],
    cwd: root,
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (!built.success) throw new Error("deno task build failed on the cache bench's copy");
  const store = await Deno.makeTempDir({ prefix: "bench-cache-" });
  const env = (port: number) => ({
    APP_ORIGIN: `http://127.0.0.1:${port}`,
    KV_PATH: join(store, "kv.sqlite3"),
  });

  const pairs: { limit: WrkResult; cached: WrkResult }[] = [];
  const codings: { plain: WrkResult; compressed: WrkResult }[] = [];
  {
    await using limit = await start(root, ["run", "-A", "bench/bare.ts"], {
      DENO_V8_FLAGS: await startV8Flags(root),
    }, "/list");
    await using cached = await start(root, ["task", "start"], env, "/list-cached");
    const load = { seconds, connections };
    for (let round = -1; round < 2 * rounds; round++) {
      if (round >= 0) {
        progress(`cache: /list cached vs the limit, round ${round + 1}/${2 * rounds}`);
      }
      const [limitCpu, cachedCpu] = round % 2 === 0 ? [0, 1] : [1, 0];
      await pin(limit.pid(), limitCpu);
      await pin(cached.pid(), cachedCpu);
      const [l, c] = await Promise.all([
        wrk(limit.origin + "/list", { ...load, cpu: limitCpu }),
        wrk(cached.origin + "/list-cached", { ...load, cpu: cachedCpu }),
      ]);
      if (round >= 0) pairs.push({ limit: l, cached: c }); // round -1 warms both up
    }
    // The cached server alone, on CPU 1, its wrk on CPU 0: plain and compressed hits in turn.
    await pin(cached.pid(), 1);
    for (let round = 0; round < rounds; round++) {
      progress(`cache: compressed hits vs plain ones, round ${round + 1}/${rounds}`);
      const url = cached.origin + "/list-cached";
      const plain = await wrk(url, { ...load, cpu: 0 });
      const compressed = await wrk(url, { ...load, cpu: 0, headers: BROWSER_ENCODINGS });
      codings.push({ plain, compressed });
    }
  }

  const invalidationMs: number[] = [];
  if (options.invalidation !== false) {
    await using serve = await start(
      root,
      (port) => ["serve", "-A", "--parallel", "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
      (port) => ({ ...env(port), DENO_JOBS: "2", KV_PATH: join(store, "serve.sqlite3") }),
      "/cached",
    );
    using client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
    const load = async () => {
      const res = await fetch(serve.origin + "/cached", { client });
      const html = await res.text();
      return {
        worker: res.headers.get("x-worker")!,
        version: /version (?:<!-- -->)?(\d+)/.exec(html)?.[1],
      };
    };
    // Both workers hold the page before each round.
    const workers = new Set<string>();
    for (let i = 0; i < 400 && workers.size < 2; i++) workers.add((await load()).worker);
    if (workers.size < 2) throw new Error("the cache bench reached one worker only");
    for (let round = 0; round < INVALIDATION_ROUNDS; round++) {
      progress(
        `cache: revalidateTag across deno serve --parallel workers, ${
          round + 1
        }/${INVALIDATION_ROUNDS}`,
      );
      for (let i = 0; i < 20; i++) await load();
      const began = performance.now();
      const res = await fetch(serve.origin + "/api/publish", { method: "POST", client });
      const { version } = await res.json();
      const done = performance.now();
      const seen = new Map<string, number>();
      const poll = async () => {
        for (let i = 0; i < 2000 && seen.size < 2; i++) {
          const answer = await load();
          if (answer.version === String(version) && !seen.has(answer.worker)) {
            seen.set(answer.worker, performance.now());
          }
        }
      };
      await Promise.all([poll(), poll()]);
      if (seen.size < 2) throw new Error("a worker never served the revalidated page");
      invalidationMs.push(Math.max(...seen.values()) - done);
      void began;
    }
  }
  await Deno.remove(store, { recursive: true });

  const median = (values: number[]) =>
    values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];
  const ratio = median(pairs.map((p) => p.cached.rps / p.limit.rps));
  const p99Ratio = median(pairs.map((p) => p.cached.p99Ms / p.limit.p99Ms));
  const errors = pairs.reduce((n, p) => n + p.cached.socketErrors + p.cached.non2xx3xx, 0);
  const rps = (of: "limit" | "cached") => median(pairs.map((p) => p[of].rps));
  const p99 = (of: "limit" | "cached") => median(pairs.map((p) => p[of].p99Ms));
  const worst = invalidationMs.length ? Math.max(...invalidationMs) : NaN;
  const codingRatio = median(codings.map((p) => p.compressed.rps / p.plain.rps));
  const codingRps = (of: "plain" | "compressed") => median(codings.map((p) => p[of].rps));
  const spread = (values: number[]) =>
    `${fmt.ratio(Math.min(...values))}–${fmt.ratio(Math.max(...values))}`;
  const rows: Row[] = [
    {
      measure: "Cache: /list from the page cache vs the limit rendering it: req/s",
      value: `${fmt.rps(rps("cached"))} vs ${fmt.rps(rps("limit"))} = ${fmt.ratio(ratio)} ` +
        `(rounds ${spread(pairs.map((p) => p.cached.rps / p.limit.rps))})`,
      target: `≥ ${fmt.ratio(CACHE_TARGET.ratio)} limit`,
      pass: ratio >= CACHE_TARGET.ratio && errors === 0,
    },
    {
      measure: "Cache: /list from the page cache vs the limit: p99",
      value: `${fmt.ms(p99("cached"))} vs ${fmt.ms(p99("limit"))} = ${fmt.ratio(p99Ratio)}`,
      target: `≤ ${fmt.ratio(CACHE_TARGET.p99)} limit`,
      pass: p99Ratio <= CACHE_TARGET.p99,
    },
    {
      measure: "Cache: a compressed hit (gzip, as browsers ask) vs a plain hit: req/s",
      value: `${fmt.rps(codingRps("compressed"))} vs ${fmt.rps(codingRps("plain"))} = ` +
        `${fmt.ratio(codingRatio)} (rounds ${
          spread(codings.map((p) => p.compressed.rps / p.plain.rps))
        })`,
      target: "≥ 0.90× plain",
      pass: codingRatio >= 0.9 &&
        codings.every((p) => p.compressed.socketErrors + p.compressed.non2xx3xx === 0),
    },
    ...invalidationMs.length === 0 ? [] : [{
      measure:
        "Cache: revalidateTag until every `deno serve --parallel` worker serves the new page",
      value: `median ${fmt.ms(median(invalidationMs))}, worst ${fmt.ms(worst)} ` +
        `(${INVALIDATION_ROUNDS} rounds)`,
      target: `≤ ${CACHE_TARGET.invalidationMs} ms`,
      pass: worst <= CACHE_TARGET.invalidationMs,
    }],
  ];
  return { rows, results: { pairs, codings, invalidationMs } };
}

if (import.meta.main) {
  const { table } = await import("./report.ts");
  const { rows } = await measureCache({
    seconds: Number(Deno.env.get("BENCH_SECONDS") ?? 5),
    connections: Number(Deno.env.get("BENCH_CONNECTIONS") ?? 50),
    rounds: Number(Deno.env.get("BENCH_ROUNDS") ?? 2),
    invalidation: Deno.env.get("BENCH_CACHE_INVALIDATION") !== "0",
    progress: (message) => console.error(`bench: ${message}`),
  });
  console.log(table(rows));
}
