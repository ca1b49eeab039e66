/**
 * @module
 * What an uncached page costs the framework beside the limit, in one process and without a
 * socket: the app `deno task start` makes (`createApp` with the project's settings, KV in memory)
 * and the limit's handler (`bench/bare.ts`), each answering `Request`s in-process, their bodies
 * read, 50 in flight, in alternating batches. Figures that the machine's load hardly moves, for
 * levers too small for `wrk` on a shared machine (docs/performance.md, perf33):
 *
 * - `alloc`: bytes of V8 heap a request allocates, from the heap's growth over a batch that no
 *   collection interrupts (young generation of 128 MB, a full collection before each batch);
 * - `cpu`: the process's CPU time a request over batches of `BATCH`, the sides alternating.
 *
 * ```sh
 * deno task build
 * NODE_ENV=production deno run -A --v8-flags=--expose-gc,--min-semi-space-size=128,--max-semi-space-size=128 bench/ssr_cost.ts alloc
 * NODE_ENV=production DENO_V8_FLAGS=--max-semi-space-size=8 deno run -A bench/ssr_cost.ts cpu
 * ```
 */
import "../lib/cli/node_env.ts";
import process from "node:process";
import manifest from "../_build/manifest.gen.ts";
import { declaredSettings } from "../lib/cli/declared.ts";
import { PROJECT_ROOT } from "../lib/cli/root.ts";
import { settingsOrExit } from "../lib/cli/settings.ts";
import { createApp } from "../lib/server/app.tsx";
import { handler as limit } from "./bare.ts";

const mode = Deno.args[0] ?? "cpu";
const PATHS = (Deno.env.get("PATHS") ?? "/counter,/list").split(",");
const IN_FLIGHT = 50;
const BATCH = Number(Deno.env.get("BATCH") ?? (mode === "alloc" ? 400 : 2000));
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? (mode === "alloc" ? 5 : 8));

const settings = settingsOrExit(await declaredSettings());
const kv = await Deno.openKv(":memory:");
const app = createApp(manifest, { ...settings.app, root: PROJECT_ROOT, kv });
await app.ready;
type Fetch = (req: Request) => Response | Promise<Response>;
const SIDES = (Deno.env.get("SIDES") ?? "framework,limit").split(",");
const sides = ([["framework", (req) => app.fetch(req)], ["limit", limit]] as [string, Fetch][])
  .filter(([name]) => SIDES.includes(name));

/** `count` requests of `path`, `IN_FLIGHT` at a time, each body read to its end. */
async function batch(fetch: Fetch, path: string, count: number): Promise<void> {
  let left = count;
  const worker = async () => {
    while (left-- > 0) {
      // Each request from a task of its own, as a server's come from the socket: what React leaves
      // for a later task (its \`setImmediate\`) runs between them, not after the whole batch.
      await new Promise((next) => setImmediate(next));
      const res = await fetch(new Request("http://127.0.0.1:8000" + path));
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

const gc = (globalThis as { gc?: () => void }).gc;
if (mode === "alloc" && !gc) throw new Error("alloc needs --v8-flags=--expose-gc");
const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[xs.length >> 1];

for (const path of PATHS) {
  for (const [, fetch] of sides) await batch(fetch, path, 1000); // warm-up: compiled, caches made
  const figures = new Map<string, number[]>(sides.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating which side goes first, so neither always follows the other's garbage.
    const order = round % 2 ? sides.toReversed() : sides;
    for (const [name, fetch] of order) {
      if (mode === "alloc") {
        gc!();
        const before = Deno.memoryUsage().heapUsed;
        await batch(fetch, path, BATCH);
        figures.get(name)!.push((Deno.memoryUsage().heapUsed - before) / BATCH / 1024);
      } else {
        const before = process.cpuUsage();
        await batch(fetch, path, BATCH);
        const { user, system } = process.cpuUsage(before);
        figures.get(name)!.push((user + system) / BATCH);
      }
    }
  }
  const [fw, lim] = [median(figures.get("framework") ?? [0]), median(figures.get("limit") ?? [0])];
  const unit = mode === "alloc" ? "KB" : "us";
  const all = (name: string) => (figures.get(name) ?? []).map((x) => x.toFixed(1)).join(" ");
  console.log(
    `${path} ${mode}: framework ${fw.toFixed(1)} ${unit}, limit ${
      lim.toFixed(1)
    } ${unit} a request` +
      ` (limit/framework ${(lim / fw).toFixed(3)}); rounds fw ${all("framework")}; limit ${
        all("limit")
      }`,
  );
}
await app.close();
kv.close();
