/**
 * @module
 * `deno task start`'s launcher, loaded by `launch.ts` once the build is current: the server
 * (`serve.ts`, from the bundle in production), with Deno's OpenTelemetry exporting to Sentry when
 * `SENTRY_DSN` is set and tracing is wanted (`SENTRY_TRACES_SAMPLE_RATE` above 0, `SENTRY_OTLP` not
 * 0). Deno reads its `OTEL_*` settings only as a process starts, so then the server runs as a child
 * process with them added (`otel/env.ts`; whatever `OTEL_*` the operator set wins), this one
 * passing SIGTERM and SIGINT on and ending with its exit code. The child never outlives this
 * process: it holds the child's stdin open, and the child stops when its stdin ends, as it does
 * when this process exits or is killed, SIGKILL included (`stop.ts`). Nor does a stop outlast its
 * bound: Deno exports what its OpenTelemetry holds as the child exits, each post waiting up to
 * `OTEL_EXPORTER_OTLP_TIMEOUT` (10 s) on a collector that never answers, one batch after another
 * (91 s measured), so a child still there past its own stop's bound is killed. With nothing to
 * add, the server runs right here, in this process.
 */
import "./node_env.ts";
import { log } from "../server/log.ts";
import { frameworkSettingsOrExit } from "./declared.ts";
import { MAX_TIMER_MS } from "../server/time_limit.ts";
import { FLUSH_MS, graceMs } from "./stop.ts";

// From source (lib/cli/) as from the bundle (_build/server/): both are two folders below the root.
const SERVER = Deno.env.get("NODE_ENV") === "development"
  ? new URL("./serve.ts", import.meta.url)
  : new URL("../../_build/server/serve.js", import.meta.url);
/**
 * What Deno's exporter gets, past the child's own stop (grace and Sentry's flush), to post its last
 * batches.
 */
const EXPORT_MS = 2000;

const settings = await frameworkSettingsOrExit();
const { sentry } = settings;
const env = (name: string) => Deno.env.get(name);
const added = sentry?.dsn && sentry.otlp && sentry.tracesSampleRate > 0
  ? (await import("../otel/env.ts")).sentryOtlpEnv({
    ...sentry,
    dsn: sentry.dsn,
    sampleRate: sentry.tracesSampleRate,
  }, env)
  : {};

if (Object.keys(added).length === 0) {
  await import(SERVER.href);
} else {
  // `--v8-flags` travel in DENO_V8_FLAGS (see deno.json), which the child inherits.
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", SERVER.pathname, "--parent-stdin"],
    env: added,
    // Never written to, never closed by us: its end is ours.
    stdin: "piped",
  }).spawn();
  const boundMs = graceMs(settings) + FLUSH_MS + EXPORT_MS;
  let stopping = false;
  let killed = false;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => {
      try {
        server.kill(signal);
      } catch { /* it has exited already */ }
      if (stopping || boundMs > MAX_TIMER_MS) return; // no bound, or none a timer holds
      stopping = true;
      setTimeout(() => {
        log("warn", `the server was still exiting ${boundMs} ms after ${signal}: killed`, {
          why:
            "past its own stop's bound: Deno's last OpenTelemetry export, most likely, waiting " +
            "on a collector that does not answer",
        });
        killed = true;
        try {
          server.kill("SIGKILL");
        } catch { /* it has just exited */ }
      }, boundMs);
    });
  }
  // A server ended by a signal it did not handle exits with 128 + its number, as in a shell; one
  // killed past its bound had been asked to stop, and did all of its stop but the export.
  const { code } = await server.status;
  Deno.exit(killed ? 0 : code);
}
