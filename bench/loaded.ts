/**
 * @module
 * What a server holds once it has served: the framework (`deno task start`'s server, `cli/start.ts`)
 * beside the limit (`bench/bare.ts`), each run with `--inspect` on loopback, loaded on `/list`
 * (wrk, 3 s), then asked over the inspector protocol for the scripts V8 has loaded (their count,
 * their source and source-map URL characters, the modules the limit has not) and the JavaScript
 * heap used after two full collections. V8 sizes its old generation at a multiple of what survives
 * a collection, so what stays loaded is what the peak under load (`bench/memory.ts`) multiplies.
 * Not part of `deno task bench`: a tool for finding what to cut, run on a copy of the test app:
 * `flock /tmp/bench.lock deno run -A bench/loaded.ts [--list]` (`--list`: every extra module).
 * `BENCH_SENTRY=1` adds a third side: the framework with Sentry on as production runs it (traces at
 * 0.1, with the settings for Deno's OpenTelemetry that the launcher adds), sent to a stand-in.
 */
import { join } from "node:path";
import { copyProject, PROJECT_ROOT } from "../tests/helpers/project_copy.ts";
import { sentryOtlpEnv } from "../lib/otel/env.ts";
import { type Running, start, startV8Flags } from "./process.ts";
import { freePort, type Held, heldBy, type Script } from "./inspector.ts";
import { startReceiver } from "./receiver.ts";
import { wrk } from "./wrk.ts";

async function held(server: Running, inspectPort: number): Promise<Held> {
  await wrk(server.origin + "/list", { seconds: 3, connections: 10 });
  return await heldBy(inspectPort);
}

const kb = (chars: number) => `${(chars / 1024).toFixed(0)} K`;
const sizes = (scripts: Script[]) => ({
  source: scripts.reduce((sum, s) => sum + s.length, 0),
  maps: scripts.reduce((sum, s) => sum + (s.sourceMapURL?.length ?? 0), 0),
});
/** A script's name without the copy's temp folder or the npm cache's, so both sides compare. */
const name = (url: string) =>
  url.replace(/^file:\/\/\/tmp\/[^/]+\//, "").replace(
    /^file:\/\/.*\/node_modules\/.deno\//,
    "npm:",
  );

await using project = await copyProject();
const copied = new Deno.Command("cp", { args: ["-R", join(PROJECT_ROOT, "bench"), project.root] });
if (!(await copied.output()).success) throw new Error("could not copy bench/");
const root = project.root;
const built = new Deno.Command(Deno.execPath(), { args: ["task", "build"], cwd: root });
if (!(await built.output()).success) throw new Error("deno task build failed in the copy");

const v8Flags = await startV8Flags(root);
await using receiver = startReceiver();
const sentryOn = {
  SENTRY_DSN: receiver.dsn,
  SENTRY_TRACES_SAMPLE_RATE: "0.1",
  ...sentryOtlpEnv(
    { dsn: receiver.dsn, sampleRate: 0.1, environment: "production" },
    () => undefined,
  ),
};
const sides: [string, string, Record<string, string>][] = [
  ["limit", "bench/bare.ts", {}],
  ["framework", "lib/cli/start.ts", {}],
  ...Deno.env.get("BENCH_SENTRY") === "1"
    ? [["framework, Sentry on", "lib/cli/start.ts", sentryOn] as [string, string, typeof sentryOn]]
    : [],
];
const results: Record<string, Held> = {};
for (const [side, file, env] of sides) {
  const inspectPort = freePort();
  await using server = await start(
    root,
    ["run", "-A", `--inspect=127.0.0.1:${inspectPort}`, file],
    { DENO_V8_FLAGS: v8Flags, ...env },
    "/list",
  );
  results[side] = await held(server, inspectPort);
}

for (const [side, { scripts, heapMb }] of Object.entries(results)) {
  const { source, maps } = sizes(scripts);
  console.log(
    `${side}: heap after load ${heapMb.toFixed(2)} MB, ${scripts.length} scripts, ` +
      `source ${kb(source)} chars, source-map URLs ${kb(maps)} chars`,
  );
}
/** The scripts of `side` that `base` has not loaded, a line, and each with `--list`. */
function extraOf(side: string, base: string): void {
  const baseNames = new Set(results[base].scripts.map((s) => name(s.url)));
  const extra = results[side].scripts.filter((s) => !baseNames.has(name(s.url)));
  const { source, maps } = sizes(extra);
  console.log(`${side}, not ${base}: ${extra.length} scripts, ${kb(source)} + ${kb(maps)} chars`);
  if (!Deno.args.includes("--list")) return;
  for (const s of extra.toSorted((a, b) => b.length - a.length)) {
    console.log(
      `  ${kb(s.length).padStart(6)} ${kb(s.sourceMapURL?.length ?? 0).padStart(6)}  ${
        name(s.url)
      }`,
    );
  }
}
extraOf("framework", "limit");
if (results["framework, Sentry on"]) extraOf("framework, Sentry on", "framework");
