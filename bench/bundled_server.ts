/**
 * @module
 * A prototype: what serving a bundled server (esbuild, `lib/cli/serve.ts` with
 * the manifest, the routes and `lib/`) would change against serving them from source, as
 * `deno serve main.ts` does (docs/performance.md, "a bundled server"). On a built copy of the test
 * app it writes five bundles into `_bundle/<name>/`: `ext` and `all` (npm packages left to Deno, or
 * bundled too), `-min` (minified), `-map` (source maps in files of their own, which Deno applies to
 * stack traces); all split, so each `import()` stays lazy, none with an inline source map. Then
 * it measures them beside the server from source (and the limit, `bench/bare.ts`), mostly with
 * figures that do not depend on the machine's load:
 *
 * - `held` (the default): `bench/loaded.ts`'s figures, heap after load (`/list`, 3 s, two full
 *   collections) and the scripts V8 holds, every side in turn, `ROUNDS` times (default 2); with
 *   `SENTRY=1` the framework's sides run with Sentry on (as `bench/loaded.ts`'s third side);
 * - `alloc`: bytes allocated a request (`--trace-gc-nvp`, 5 s of warm-up then 8 s, `/counter` and
 *   `/list`), one server at a time;
 * - `cpu`: `/counter`'s CPU a request, the server from source and `BUNDLE` (default `ext`) in
 *   turn, `ROUNDS` rounds (default 6): 3000 requests of warm-up, then `utime + stime`
 *   (`/proc/PID/stat`) over 5 s of `wrk` divided by the requests served;
 * - `peak`: peak RSS (`VmHWM`) after 10 s of `/list`, the limit, the source and `BUNDLE` in turn,
 *   `ROUNDS` rounds (default 3): a figure of the load, for what `held` predicts;
 * - `same`: each bundle's answers to a few paths against the source's (nonces, ids, ports aside),
 *   a failing route's digest among them (the same only where Deno maps the bundle's stacks);
 * - `cold`: milliseconds to the first 200 of `/` (wall time: a figure of the load), `ROUNDS` each.
 *
 * `flock /tmp/bench.lock deno run -A bench/bundled_server.ts [held|same|alloc|cpu|peak|cold]`.
 *
 * Since bundle33 `deno task start` serves such a bundle (`lib/build/server_bundle.ts`, the
 * `ext-map` variant); this prototype bundles `lib/cli/serve.ts` (the server, whose imports of the
 * manifest and `routes/_settings.ts` are literal now) and compares it with the same module run
 * from source. Paths made from `import.meta.url` (`cli/root.ts`, `errors/digest.ts`,
 * `sentry/sdk.ts`'s bundles) still hold from `_bundle/<name>/`, two folders below the root as
 * `lib/cli/` is; the CSS modules the import map sends to `_build/css/` are resolved through it.
 */
import * as esbuild from "esbuild";
import { join, relative } from "node:path";
import { copyProject, PROJECT_ROOT } from "../tests/helpers/project_copy.ts";
import { serverBuildOptions } from "../lib/build/server_bundle.ts";
import { sentryOtlpEnv } from "../lib/otel/env.ts";
import { rssMb, start, startV8Flags } from "./process.ts";
import { freePort, heldBy } from "./inspector.ts";
import { startReceiver } from "./receiver.ts";
import { wrk } from "./wrk.ts";

interface Variant {
  name: string;
  /** npm packages bundled too, or left to Deno (`npm:` through the import map). */
  packages: "bundle" | "external";
  minify: boolean;
  sourcemap?: boolean;
}

const VARIANTS: Variant[] = [
  { name: "ext", packages: "external", minify: false },
  // As `ext`, with source maps beside the chunks (`.js.map`): Deno 2.9.6 maps stack traces
  // through them, and the chunks hold only the map's file name.
  { name: "ext-map", packages: "external", minify: false, sourcemap: true },
  { name: "ext-min", packages: "external", minify: true },
  { name: "all", packages: "bundle", minify: false },
  { name: "all-min", packages: "bundle", minify: true },
];

async function bundle(root: string, variant: Variant): Promise<string> {
  const outdir = join(root, "_bundle", variant.name);
  await esbuild.build({
    ...serverBuildOptions(root, { start: "lib/cli/serve.ts" }, outdir, variant.packages),
    minify: variant.minify,
    sourcemap: variant.sourcemap ? "linked" : false,
    // A bundled CommonJS package's `require("util")`: Deno's own Node modules.
    banner: variant.packages === "bundle"
      ? {
        js: 'import { createRequire as __cr } from "node:module"; ' +
          "const require = __cr(import.meta.url);",
      }
      : undefined,
    logLevel: "error",
  });
  return relative(root, join(outdir, "start.js"));
}

const rounds = (fallback: number) => Number(Deno.env.get("ROUNDS") ?? fallback);
const kb = (chars: number) => `${(chars / 1024).toFixed(0)} K`;

/** With `SENTRY=1`, the framework's sides run with Sentry on as `bench/loaded.ts`'s third side. */
function sentryEnv(dsn: string, side: string): Record<string, string> {
  if (Deno.env.get("SENTRY") !== "1" || side === "limit") return {};
  return {
    SENTRY_DSN: dsn,
    SENTRY_TRACES_SAMPLE_RATE: "0.1",
    ...sentryOtlpEnv({ dsn, sampleRate: 0.1, environment: "production" }, () => undefined),
  };
}

async function held(root: string, sides: [string, string][], v8Flags: string): Promise<void> {
  await using receiver = startReceiver();
  for (let round = 1; round <= rounds(2); round++) {
    for (const [side, file] of sides) {
      const inspectPort = freePort();
      await using server = await start(
        root,
        ["run", "-A", `--inspect=127.0.0.1:${inspectPort}`, file],
        { DENO_V8_FLAGS: v8Flags, ...sentryEnv(receiver.dsn, side) },
        "/list",
      );
      await wrk(server.origin + "/list", { seconds: 3, connections: 10 });
      const { scripts, heapMb } = await heldBy(inspectPort);
      const ours = scripts.filter((s) => s.url.startsWith("file://"));
      const source = ours.reduce((sum, s) => sum + s.length, 0);
      const maps = ours.reduce((sum, s) => sum + (s.sourceMapURL?.length ?? 0), 0);
      const npm = ours.filter((s) => s.url.includes("/node_modules/")).length;
      console.log(
        `round ${round} ${side.padEnd(8)} heap after load ${heapMb.toFixed(2)} MB, ` +
          `${scripts.length} scripts (${ours.length} files, ${npm} of them packages'), ` +
          `files' source ${kb(source)} chars + source-map URLs ${kb(maps)}`,
      );
    }
  }
}

/**
 * Peak RSS (`VmHWM`) after 10 s of `/list` at 50 connections, each side in turn, `ROUNDS` rounds
 * (default 3): a figure of the load, as `bench/memory.ts`'s, for what the held figures predict.
 */
async function peak(root: string, sides: [string, string][], v8Flags: string): Promise<void> {
  await using receiver = startReceiver();
  for (let round = 1; round <= rounds(3); round++) {
    const line: string[] = [];
    for (const [side, file] of sides) {
      await using server = await start(root, ["run", "-A", file], {
        DENO_V8_FLAGS: v8Flags,
        ...sentryEnv(receiver.dsn, side),
      }, "/list");
      const { rps } = await wrk(server.origin + "/list", { seconds: 10, connections: 50 });
      const status = await Deno.readTextFile(`/proc/${server.pid()}/status`);
      const hwm = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)![1]) / 1024;
      line.push(
        `${side} ${hwm.toFixed(0)} MB (${rps.toFixed(0)} req/s, now ${
          (await rssMb(server.pid())).toFixed(0)
        })`,
      );
    }
    console.log(`round ${round}: ${line.join(", ")}`);
  }
}

/** CPU ticks (utime + stime) of a process so far, in seconds. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of stat(5), 12 and 13 past the command's name.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The same work before every measured round, whatever the load: 3000 requests, 10 at a time (a
 * duration's worth would leave a server on a busy machine less compiled than one on an idle one).
 */
async function warmUp(url: string): Promise<void> {
  let left = 3000;
  const loop = async () => {
    while (left-- > 0) await (await fetch(url)).arrayBuffer();
  };
  await Promise.all(Array.from({ length: 10 }, loop));
}

async function cpu(root: string, sides: [string, string][], v8Flags: string): Promise<void> {
  const perSide: Record<string, number[]> = {};
  for (let round = 1; round <= rounds(6); round++) {
    // The order swapped each round: neither side always runs first.
    const order = round % 2 ? sides : sides.toReversed();
    for (const [side, file] of order) {
      await using server = await start(root, ["run", "-A", file], { DENO_V8_FLAGS: v8Flags });
      const url = server.origin + "/counter";
      await warmUp(url);
      const before = await cpuSeconds(server.pid());
      const { requests } = await wrk(url, { seconds: 5, connections: 50 });
      const us = (await cpuSeconds(server.pid()) - before) / requests * 1e6;
      (perSide[side] ??= []).push(us);
      console.log(
        `round ${round} ${side.padEnd(8)} ${requests} requests, ${us.toFixed(1)} µs CPU a request`,
      );
    }
  }
  const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [[a], [b]] = sides;
  console.log(
    `median: ${a} ${median(perSide[a]).toFixed(1)} µs, ${b} ${median(perSide[b]).toFixed(1)} µs; ` +
      `${b}/${a} each round: ${
        perSide[a].map((x, i) => (perSide[b][i] / x).toFixed(2)).join(", ")
      }`,
  );
}

/** Bytes allocated a request: V8's `allocated` of every collection past the warm-up. */
async function alloc(root: string, sides: [string, string][], v8Flags: string): Promise<void> {
  for (const path of ["/counter", "/list"]) {
    for (const [side, file] of sides) {
      const port = freePort();
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", file],
        cwd: root,
        env: {
          NODE_ENV: "production",
          DENO_V8_FLAGS: `${v8Flags},--trace-gc-nvp`,
          PORT: String(port),
          HOSTNAME: "127.0.0.1",
        },
        stdout: "piped",
        stderr: "null",
      }).spawn();
      let log = "";
      const reading = (async () => {
        for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) log += text;
      })();
      const url = `http://127.0.0.1:${port}${path}`;
      for (let i = 0; i < 600; i++) {
        const answered = await fetch(url).then(
          (r) => r.body?.cancel().then(() => true),
          () => false,
        );
        if (answered) break;
        await new Promise((done) => setTimeout(done, 100));
      }
      await wrk(url, { seconds: 5, connections: 50 });
      const mark = log.length;
      const { requests } = await wrk(url, { seconds: 8, connections: 50 });
      const measured = log.slice(mark);
      child.kill("SIGKILL");
      await child.status;
      await reading;
      let bytes = 0;
      let collections = 0;
      for (const line of measured.split("\n")) {
        const at = line.indexOf("{");
        if (!line.includes("GC: {") || at < 0) continue;
        // A line cut by the mark or the kill: not a whole collection's.
        const allocated = /"allocated":(\d+)[,}]/.exec(line.slice(at))?.[1];
        if (allocated !== undefined) bytes += Number(allocated), collections++;
      }
      console.log(
        `${path.padEnd(9)} ${side.padEnd(8)} ${requests} requests, ${collections} collections, ` +
          `${(bytes / requests / 1024).toFixed(1)} KB allocated a request`,
      );
    }
  }
}

/** What differs between any two servers' answers: nonces, ids, times, the port. */
const normal = (text: string) =>
  text.replace(/nonce="[^"]*"/g, 'nonce=""').replace(/\b[0-9a-f]{32}\b/g, "<id>")
    .replace(/\b[0-9A-HJKMNP-TV-Z]{26}\b/g, "<ulid>").replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>")
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>");

/** Each bundle answers every path of `SAME_PATHS` as the server from source does. */
async function same(root: string, sides: [string, string][]): Promise<void> {
  const answers: Record<string, string> = {};
  for (const [side, file] of sides) {
    await using server = await start(root, ["run", "-A", file]);
    for (const path of SAME_PATHS) {
      const res = await fetch(server.origin + path, { redirect: "manual" });
      const answer = `${res.status} ${res.headers.get("content-type")}\n${
        normal(await res.text())
      }`;
      const verdict = answers[path] === undefined
        ? (answers[path] = answer, "reference")
        : answers[path] === answer
        ? "same"
        : "DIFFERENT";
      const digest = /Digest: ([0-9A-Z-]+)/.exec(answer)?.[1];
      console.log(
        `${side.padEnd(8)} ${path.padEnd(15)} ${res.status} ${answer.length} ${verdict}` +
          (digest ? ` (digest ${digest})` : ""),
      );
      if (verdict !== "DIFFERENT") continue;
      let at = 0;
      while (answers[path][at] === answer[at]) at++;
      console.log(
        `  source: ${answers[path].slice(at - 40, at + 40)}\n  ${side}: ${
          answer.slice(at - 40, at + 40)
        }`,
      );
    }
  }
}

const SAME_PATHS = [
  "/",
  "/list",
  "/counter",
  "/streaming",
  "/blog/hello",
  "/nowhere",
  "/api/time",
  "/bundle_failure",
];

/**
 * A route that fails, added to the copy for `same`: its digest is made of the stack's frames in the
 * app's code, so a bundle's equals the source's only when Deno maps the bundle's frames back.
 */
const FAILING_ROUTE = `import type { Handlers } from "shell";

export const handler: Handlers = {
  GET() {
    throw new Error("a failure, for the bundles' stack traces");
  },
};
`;

async function cold(root: string, sides: [string, string][]): Promise<void> {
  const { coldStart } = await import("./process.ts");
  for (let round = 1; round <= rounds(5); round++) {
    for (const [side, file] of sides) {
      console.log(
        `round ${round} ${side.padEnd(8)} ${
          (await coldStart(root, ["run", "-A", file])).toFixed(0)
        } ms`,
      );
    }
  }
}

await using project = await copyProject();
const root = project.root;
const copied = new Deno.Command("cp", { args: ["-R", join(PROJECT_ROOT, "bench"), root] });
if (!(await copied.output()).success) throw new Error("could not copy bench/");
const mode = Deno.args[0] ?? "held";
if (mode === "same") await project.write("routes/bundle_failure.ts", FAILING_ROUTE);
const built = new Deno.Command(Deno.execPath(), { args: ["task", "build"], cwd: root });
if (!(await built.output()).success) throw new Error("deno task build failed in the copy");
const bundles: [string, string][] = [];
for (const variant of VARIANTS) bundles.push([variant.name, await bundle(root, variant)]);
await esbuild.stop();
const v8Flags = await startV8Flags(root);
const source: [string, string] = ["source", "lib/cli/serve.ts"];

if (mode === "held") await held(root, [["limit", "bench/bare.ts"], source, ...bundles], v8Flags);
else if (mode === "alloc") await alloc(root, [source, ...bundles], v8Flags);
else if (mode === "peak") {
  const name = Deno.env.get("BUNDLE") ?? "ext";
  const bundled = bundles.find(([side]) => side === name)!;
  await peak(root, [["limit", "bench/bare.ts"], source, bundled], v8Flags);
} else if (mode === "same") await same(root, [source, ...bundles]);
else if (mode === "cold") await cold(root, [source, ...bundles]);
else if (mode === "cpu") {
  const name = Deno.env.get("BUNDLE") ?? "ext";
  await cpu(root, [source, bundles.find(([side]) => side === name)!], v8Flags);
} else throw new Error(`unknown mode ${mode}: held, same, alloc, cpu, peak or cold`);
