/**
 * @module
 * The shared page cache (docs/caching.md), measured on a copy of the project with two routes of
 * its own: `/list-cached` (the example's `/list` with `cache`) and the tag test's page and
 * publisher (tests/process/page_cache_test.ts).
 *
 * - Throughput and p99: the cached `/list` served by `deno task start` against the limit rendering
 *   `/list` (`bench/bare.ts`), side by side as bench/run.ts does SSR: both loaded at once, each
 *   server and its `wrk` on a CPU of their own, trading CPUs every round. Then the same pair with
 *   the cached server under production's telemetry (Sentry's DSN to a loopback receiver, Deno's
 *   OpenTelemetry tracing a tenth of requests, as the launcher sets it: `bench/telemetry.ts`).
 * - Compression on hits: the same cached page asked for with a browser's `Accept-Encoding` and
 *   without, in alternate runs of the same server, side by side in one run: what a compressed hit
 *   costs against an uncompressed one (it sends the coding the page holds: nothing is compressed).
 * - Invalidation: `deno serve --parallel` (2 workers) on one KV file; from `revalidateTag`'s return
 *   on one worker until every worker has answered with the new page. Each worker is asked back to
 *   back on a kept-alive connection of its own (bench/pinned.ts), and the times are the server's:
 *   the publisher's after `revalidateTag` returned and each answer's, on the clock the workers
 *   (threads of one process) share — so a bench process slow to read an answer on a loaded
 *   machine does not add to the figure. The latest worker is the round's figure; what the bench
 *   itself saw is shown beside it.
 */
import { join } from "node:path";
import { CACHED_FILES } from "../tests/process/page_cache_test.ts";
import { copyProject } from "../tests/helpers/project_copy.ts";
import { pin, type Running, start, startV8Flags } from "./process.ts";
import { startReceiver } from "./receiver.ts";
import { PRODUCTION_SENTRY } from "./telemetry.ts";
import { type Pinned, pinnedConnection } from "./pinned.ts";
import { fmt, median, pairedRatio, type Row } from "./report.ts";
import { wrk, type WrkResult } from "./wrk.ts";

export interface CacheOptions {
  seconds: number;
  connections: number;
  rounds: number;
  /** Measure `revalidateTag` across workers too (the default); false: throughput only. */
  invalidation?: boolean;
  /** The throughput pair with Sentry on too (the default). */
  sentry?: boolean;
  progress(message: string): void;
  /** Only the invalidation part (`deno run -A bench/cache.ts invalidation`). */
  invalidationOnly?: boolean;
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

/** When, on the clock every worker of one process shares, an answer was made (ms). */
const NOW = "performance.timeOrigin + performance.now()";
/** What Chromium sends: the page cache answers it with gzip (compression.ts). */
const BROWSER_ENCODINGS = { "Accept-Encoding": "gzip, deflate, br, zstd" };

// The tag test's pages, but its root middleware only around `/cached` (below): `/list-cached` is a
// page with no middleware of the app's, which the page cache answers ahead of the app's chain
// (docs/caching.md, "Hits ahead of the chain").
const { "routes/_middleware.ts": _rootMiddleware, "routes/cached.tsx": cachedPage, ...tagFiles } =
  CACHED_FILES;

const FILES = {
  ...tagFiles,
  "routes/list-cached.tsx": `export { default } from "./list.tsx";
    export const cache = { maxAge: 3600 };`,
  "routes/(timed)/cached.tsx": cachedPage,
  // The tag test's, with the times the invalidation is measured by.
  "routes/(timed)/_middleware.ts": `const worker = crypto.randomUUID();
    export const handler = async (c, next) => {
      const began = performance.now();
      await next();
      c.header("X-Worker", worker);
      c.header("X-Answered-At", String(${NOW}));
      c.header("X-Took", String(performance.now() - began));
    };`,
  "routes/api/publish.ts": `import { revalidateTag } from "shell";
    import { kvOf } from "shell/data";
    export const handler = {
      async POST(_req, ctx) {
        const kv = kvOf(ctx);
        const version = ((await kv.get(["version"])).value ?? 0) + 1;
        await kv.set(["version"], version);
        await revalidateTag("wall", ctx);
        return Response.json({ version, revalidatedAt: ${NOW} });
      },
    };`,
};

/** One round of the invalidation measure, ms. */
interface Invalidation {
  /** From `revalidateTag`'s return to the last worker's first answer with the new page (their clock). */
  server: number;
  /** From the publisher's answer reaching the bench to the last worker's new page reaching it. */
  client: number;
}

/**
 * Rounds of `revalidateTag` on one worker of `deno serve --parallel` (2 workers, one KV file): each
 * round's figure is the time from the publisher's answer (after `revalidateTag` returned) until
 * every worker has served the new page, each worker asked back to back on a connection of its own.
 */
async function measureInvalidation(
  root: string,
  env: (port: number) => Record<string, string>,
  kvPath: string,
  progress: (message: string) => void,
): Promise<Invalidation[]> {
  await using serve = await start(
    root,
    (port) => ["serve", "-A", "--parallel", "--host", "127.0.0.1", `--port=${port}`, "main.ts"],
    (port) => ({ ...env(port), DENO_JOBS: "2", KV_PATH: kvPath }),
    "/cached",
  );
  const port = Number(new URL(serve.origin).port);
  // One kept-alive connection per worker (the kernel hands each new one to a worker), asked for
  // until both answered: the second worker may still be starting when the first answers.
  const workers = new Map<string, Pinned>();
  const deadline = performance.now() + 60_000;
  while (workers.size < 2 && performance.now() < deadline) {
    const connections = await Promise.all(Array.from({ length: 4 }, () => pinnedConnection(port)));
    const answers = await Promise.all(connections.map((connection) => connection.get("/cached")));
    for (const [i, connection] of connections.entries()) {
      const worker = answers[i].headers.get("x-worker")!;
      if (workers.has(worker)) connection[Symbol.dispose]();
      else workers.set(worker, connection);
    }
    if (workers.size < 2) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (workers.size < 2) throw new Error("the cache bench reached one worker only");
  const versionOf = (html: string) => /version (?:<!-- -->)?(\d+)/.exec(html)?.[1];
  using client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  const rounds: Invalidation[] = [];
  try {
    // Round -1 warms the path up (a page rendered again, stored, read from KV), as the first
    // revalidation after a start is slower on every server; it is not counted.
    for (let round = -1; round < INVALIDATION_ROUNDS; round++) {
      progress(
        `cache: revalidateTag across deno serve --parallel workers, ${
          round + 1
        }/${INVALIDATION_ROUNDS}`,
      );
      // Each worker holds the current page (a HIT) before the round.
      for (const connection of workers.values()) {
        for (let i = 0; i < 50; i++) {
          if ((await connection.get("/cached")).headers.get("x-cache") === "HIT") break;
        }
      }
      const res = await fetch(serve.origin + "/api/publish", { method: "POST", client });
      const { version, revalidatedAt } = await res.json();
      const returned = performance.now();
      const seen = await Promise.all([...workers.values()].map(async (connection) => {
        for (let i = 0; i < 5000; i++) {
          const answer = await connection.get("/cached");
          if (versionOf(answer.body) !== String(version)) continue;
          return {
            server: Number(answer.headers.get("x-answered-at")) - revalidatedAt,
            client: performance.now() - returned,
            took: Number(answer.headers.get("x-took")),
            state: answer.headers.get("x-cache"),
          };
        }
        throw new Error("a worker never served the revalidated page");
      }));
      if (round < 0) continue;
      rounds.push({
        server: Math.max(...seen.map((at) => at.server)),
        client: Math.max(...seen.map((at) => at.client)),
      });
      progress(
        `round ${round + 1}: ${
          seen.map((at) =>
            `${at.server.toFixed(1)} (bench ${at.client.toFixed(1)}; ${at.state} in ${
              at.took.toFixed(1)
            })`
          ).join(", ")
        } ms`,
      );
    }
  } finally {
    workers.forEach((connection) => connection[Symbol.dispose]());
  }
  return rounds;
}

export async function measureCache(options: CacheOptions) {
  const { seconds, connections, rounds, progress } = options;
  await using project = await copyProject();
  const { root } = project;
  for (const [path, text] of Object.entries(FILES)) await project.write(path, text);
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

  type Pair = { limit: WrkResult; cached: WrkResult };
  const pairs: Pair[] = [];
  const sentryPairs: Pair[] = [];
  const codings: { plain: WrkResult; compressed: WrkResult }[] = [];
  if (!options.invalidationOnly) {
    await using limit = await start(root, ["run", "-A", "bench/bare.ts"], {
      DENO_V8_FLAGS: await startV8Flags(root),
    }, "/list");
    const load = { seconds, connections };
    /** `2 * rounds` pairs of `cached` against the limit, after one that warms both up. */
    const against = async (cached: Running, name: string, into: Pair[]) => {
      for (let round = -1; round < 2 * rounds; round++) {
        if (round >= 0) {
          progress(`cache: /list cached${name} vs the limit, round ${round + 1}/${2 * rounds}`);
        }
        const [limitCpu, cachedCpu] = round % 2 === 0 ? [0, 1] : [1, 0];
        await pin(limit.pid(), limitCpu);
        await pin(cached.pid(), cachedCpu);
        const [l, c] = await Promise.all([
          wrk(limit.origin + "/list", { ...load, cpu: limitCpu }),
          wrk(cached.origin + "/list-cached", { ...load, cpu: cachedCpu }),
        ]);
        if (round >= 0) into.push({ limit: l, cached: c });
      }
    };
    {
      await using cached = await start(root, ["task", "start"], env, "/list-cached");
      await against(cached, "", pairs);
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
    if (options.sentry !== false) {
      await using receiver = startReceiver();
      const production = PRODUCTION_SENTRY(receiver.dsn);
      await using cached = await start(root, ["task", "start"], (port) => ({
        ...env(port),
        KV_PATH: join(store, "sentry.sqlite3"),
        ...production.env,
      }), "/list-cached");
      await against(cached, `, ${production.name},`, sentryPairs);
      // Deno exports every 5 s: a round's sampled hits have gone out by the next one's end.
      if (receiver.otlpPosts() === 0) throw new Error("the Sentry-on server exported no trace");
    }
  }

  const invalidation = options.invalidation === false ? [] : await measureInvalidation(
    root,
    env,
    join(store, "serve.sqlite3"),
    progress,
  );
  await Deno.remove(store, { recursive: true });

  const invalidationMs = invalidation.map((round) => round.server);
  const seenMs = invalidation.map((round) => round.client);
  const worst = invalidationMs.length ? Math.max(...invalidationMs) : NaN;
  const codingRatio = median(codings.map((p) => p.compressed.rps / p.plain.rps));
  const codingRps = (of: "plain" | "compressed") => median(codings.map((p) => p[of].rps));
  const spread = (values: number[]) =>
    `${fmt.ratio(Math.min(...values))}–${fmt.ratio(Math.max(...values))}`;
  /** The pair's two rows, req/s and p99, each beside its target. */
  const pairRows = (of: Pair[], name: string): Row[] => {
    if (of.length === 0) return [];
    const ratio = pairedRatio(of.map((p) => p.cached.rps / p.limit.rps));
    const p99Ratio = pairedRatio(of.map((p) => p.cached.p99Ms / p.limit.p99Ms));
    const errors = of.reduce((n, p) => n + p.cached.socketErrors + p.cached.non2xx3xx, 0);
    const rps = (side: keyof Pair) => median(of.map((p) => p[side].rps));
    const p99 = (side: keyof Pair) => median(of.map((p) => p[side].p99Ms));
    return [
      {
        measure: `Cache: /list from the page cache${name} vs the limit rendering it: req/s`,
        value: `${fmt.rps(rps("cached"))} vs ${fmt.rps(rps("limit"))} = ${fmt.ratio(ratio)} ` +
          `(rounds ${spread(of.map((p) => p.cached.rps / p.limit.rps))})`,
        target: `≥ ${fmt.ratio(CACHE_TARGET.ratio)} limit`,
        pass: ratio >= CACHE_TARGET.ratio && errors === 0,
      },
      {
        measure: `Cache: /list from the page cache${name} vs the limit: p99`,
        value: `${fmt.ms(p99("cached"))} vs ${fmt.ms(p99("limit"))} = ${fmt.ratio(p99Ratio)}`,
        target: `≤ ${fmt.ratio(CACHE_TARGET.p99)} limit`,
        pass: p99Ratio <= CACHE_TARGET.p99,
      },
    ];
  };
  const rows: Row[] = [
    ...pairRows(pairs, ""),
    ...pairRows(sentryPairs, ", Sentry on (traces 0.1),"),
  ];
  rows.push(
    ...codings.length === 0 ? [] : [{
      measure: "Cache: a compressed hit (gzip, as browsers ask) vs a plain hit: req/s",
      value: `${fmt.rps(codingRps("compressed"))} vs ${fmt.rps(codingRps("plain"))} = ` +
        `${fmt.ratio(codingRatio)} (rounds ${
          spread(codings.map((p) => p.compressed.rps / p.plain.rps))
        })`,
      target: "≥ 0.90× plain",
      pass: codingRatio >= 0.9 &&
        codings.every((p) => p.compressed.socketErrors + p.compressed.non2xx3xx === 0),
    }],
    ...invalidationMs.length === 0 ? [] : [{
      measure:
        "Cache: revalidateTag until every `deno serve --parallel` worker serves the new page",
      value: `median ${fmt.ms(median(invalidationMs))}, worst ${fmt.ms(worst)} ` +
        `(${INVALIDATION_ROUNDS} rounds; as the bench saw it: median ${fmt.ms(median(seenMs))}, ` +
        `worst ${fmt.ms(Math.max(...seenMs))})`,
      target: `≤ ${CACHE_TARGET.invalidationMs} ms`,
      pass: worst <= CACHE_TARGET.invalidationMs,
    }],
  );
  return { rows, results: { pairs, sentryPairs, codings, invalidation } };
}

if (import.meta.main) {
  const { table } = await import("./report.ts");
  const { rows } = await measureCache({
    seconds: Number(Deno.env.get("BENCH_SECONDS") ?? 5),
    connections: Number(Deno.env.get("BENCH_CONNECTIONS") ?? 50),
    rounds: Number(Deno.env.get("BENCH_ROUNDS") ?? 2),
    invalidation: Deno.env.get("BENCH_CACHE_INVALIDATION") !== "0",
    sentry: Deno.env.get("BENCH_CACHE_SENTRY") !== "0",
    progress: (message) => console.error(`bench: ${message}`),
    invalidationOnly: Deno.args.includes("invalidation"),
  });
  console.log(table(rows));
}
