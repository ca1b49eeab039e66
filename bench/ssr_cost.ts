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
 * `SIDES` (`framework,limit`) may also name `span` (the app with no telemetry, under Deno's span),
 * `otel` (the app on Deno's OpenTelemetry alone) and `sentry` (Sentry on as production runs it: on
 * Deno's OpenTelemetry, traces sampled at 0.1, the DSN a closed loopback port). For these the bench
 * runs itself again with the launcher's `OTEL_*` variables (Deno reads them only at start), and
 * each of their requests goes through a server span started, entered and ended as `Deno.serve`'s
 * traced wrapper does: `span` less `framework` is that span, `otel` less `span` what the app adds
 * to Deno's tracing, `sentry` less `otel` what Sentry adds to that.
 *
 * ```sh
 * deno task build
 * NODE_ENV=production DENO_V8_FLAGS=--expose-gc,--min-semi-space-size=128,--max-semi-space-size=128 deno run -A bench/ssr_cost.ts alloc
 * NODE_ENV=production DENO_V8_FLAGS=--max-semi-space-size=8 deno run -A bench/ssr_cost.ts cpu
 * ```
 */
import "../lib/cli/node_env.ts";
import process from "node:process";
import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import manifest from "../_build/manifest.gen.ts";
import { declaredSettings } from "../lib/cli/declared.ts";
import { PROJECT_ROOT } from "../lib/cli/root.ts";
import { settingsOrExit } from "../lib/cli/settings.ts";
import { loadTelemetry } from "../lib/cli/telemetry.ts";
import { denoTracing } from "../lib/otel/detect.ts";
import { sentryOtlpEnv } from "../lib/otel/env.ts";
import { withRelease } from "../lib/sentry/config.ts";
import type { Telemetry } from "../lib/server/telemetry.ts";
import { createApp } from "../lib/server/app.tsx";
import { handler as limit } from "./bare.ts";

const mode = Deno.args[0] ?? "cpu";
const SIDES = (Deno.env.get("SIDES") ?? "framework,limit").split(",");
const traced = ["span", "otel", "sentry"].some((side) => SIDES.includes(side));
if (traced && !denoTracing()) {
  // Nothing listens on port 9: Sentry's events and Deno's exports fail there, as cheaply as can be.
  const dsn = "http://key@127.0.0.1:9/1";
  const otel = sentryOtlpEnv({ dsn, sampleRate: 0.1, environment: "production" }, () => undefined);
  const { code } = await new Deno.Command(Deno.execPath(), {
    // `DENO_V8_FLAGS` goes with the environment; `--v8-flags` would not.
    args: ["run", "-A", new URL(import.meta.url).pathname, ...Deno.args],
    env: { ...otel, SENTRY_DSN: dsn, SENTRY_TRACES_SAMPLE_RATE: "0.1" },
  }).spawn().status;
  Deno.exit(code);
}

const PATHS = (Deno.env.get("PATHS") ?? "/counter,/list").split(",");
const IN_FLIGHT = 50;
const BATCH = Number(Deno.env.get("BATCH") ?? (mode === "alloc" ? 400 : 2000));
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? (mode === "alloc" ? 5 : 8));

const settings = settingsOrExit(await declaredSettings());
const kv = await Deno.openKv(":memory:");
type Fetch = (req: Request) => Response | Promise<Response>;
const appOf = async (telemetry?: Telemetry): Promise<Fetch> => {
  const app = createApp(manifest, { ...settings.app, root: PROJECT_ROOT, kv, telemetry });
  await app.ready;
  return (req) => app.fetch(req);
};
const sentry = settings.sentry && withRelease(settings.sentry, manifest.buildId);
const makers: Record<string, () => Promise<Fetch>> = {
  framework: () => appOf(),
  limit: () => Promise.resolve(limit),
  span: async () => served(await appOf()),
  otel: async () => served(await appOf(await loadTelemetry())),
  sentry: async () => served(await appOf(await loadTelemetry(sentry))),
};
const sides: [string, Fetch][] = [];
for (const name of SIDES) sides.push([name, await makers[name]()]);

/**
 * `fetch` under a server span as `Deno.serve` makes one when Deno traces (Deno 2.9's
 * `ext/http/00_serve.ts`): the caller's context extracted, the span started and entered, the
 * request's attributes set, the span ended once the Response is there.
 */
function served(fetch: Fetch): Fetch {
  const tracer = trace.getTracer("deno");
  return async (req) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER }, parent);
    const url = new URL(req.url);
    span.setAttributes({
      "http.request.method": req.method,
      "url.full": req.url,
      "url.scheme": url.protocol.slice(0, -1),
      "url.path": url.pathname,
      "url.query": url.search.slice(1),
    });
    try {
      const res = await context.with(trace.setSpan(parent, span), () => fetch(req));
      span.setAttribute("http.response.status_code", res.status);
      return res;
    } finally {
      span.end();
    }
  };
}

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
  const unit = mode === "alloc" ? "KB" : "us";
  const [first] = sides[0];
  const line = sides.map(([name]) => {
    const all = figures.get(name)!;
    const ratio = name === first
      ? ""
      : ` (${(median(all) / median(figures.get(first)!)).toFixed(3)}x)`;
    return `${name} ${median(all).toFixed(1)}${ratio} [${all.map((x) => x.toFixed(1)).join(" ")}]`;
  });
  console.log(`${path} ${mode}, ${unit} a request (x: of ${first}'s): ${line.join("; ")}`);
}
kv.close();
Deno.exit(0); // the apps' timers and the telemetry's exporter would hold the process
