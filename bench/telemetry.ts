/**
 * @module
 * What telemetry costs, side by side with telemetry off: the framework under `deno task start`
 * with Sentry's DSN and every request traced by Deno's OpenTelemetry (the launcher turns it on;
 * Sentry reports errors only), and, for comparison, with the Sentry SDK tracing requests itself
 * (`SENTRY_OTLP=0`) at rates 1.0 and 0.1. Each pair runs at once, each server and its wrk pinned to
 * a CPU of their own, trading CPUs every round, so the machine's drift hits both alike. Two ratios
 * per pair: requests per second, and CPU time per request (all the server's threads, from /proc),
 * which other work on the machine disturbs less.
 */
import { pin, type Running, start } from "./process.ts";
import type { Receiver } from "./receiver.ts";
import { wrk } from "./wrk.ts";

export interface Variant {
  name: string;
  env: Record<string, string>;
}

export interface Pair {
  rpsRatio: number;
  cpuRatio: number;
  /** CPU time per request, µs: telemetry off, then the variant. */
  offCpuUs: number;
  cpuUs: number;
  errors: number;
}

/** Sentry as production runs it: errors, and Deno's OpenTelemetry tracing a tenth of requests. */
export const PRODUCTION_SENTRY = (dsn: string): Variant => ({
  name: "Sentry on, traces sampled at 0.1",
  env: { SENTRY_DSN: dsn, SENTRY_TRACES_SAMPLE_RATE: "0.1" },
});

export const VARIANTS = (dsn: string): Variant[] => [
  {
    name: "OpenTelemetry, every request traced, Sentry errors",
    env: { SENTRY_DSN: dsn, SENTRY_TRACES_SAMPLE_RATE: "1.0" },
  },
  {
    name: "OpenTelemetry, rate 0.1, Sentry errors",
    env: { SENTRY_DSN: dsn, SENTRY_TRACES_SAMPLE_RATE: "0.1" },
  },
  {
    name: "Sentry SDK tracing, rate 1.0",
    env: { SENTRY_DSN: dsn, SENTRY_TRACES_SAMPLE_RATE: "1.0", SENTRY_OTLP: "0" },
  },
  {
    name: "Sentry SDK tracing, rate 0.1",
    env: { SENTRY_DSN: dsn, SENTRY_TRACES_SAMPLE_RATE: "0.1", SENTRY_OTLP: "0" },
  },
];

/** A framework server for `variant`, once it has shown that its telemetry sends. */
export async function startVariant(
  root: string,
  variant: Variant,
  receiver: Receiver,
): Promise<Running> {
  const server = await start(root, ["task", "start"], variant.env);
  const sent = () => receiver.otlpPosts() + receiver.envelopes();
  const before = sent();
  // Deno exports every 5 s; the SDK at rate 0.1 may take a few requests to send a transaction.
  for (let i = 0; i < 60 && sent() === before; i++) {
    await (await fetch(server.origin + "/list")).text();
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (sent() === before) {
    await server.stop();
    throw new Error(`${variant.name}: the server sent nothing to the receiver`);
  }
  return server;
}

/** CPU time of a process so far, all threads, in ms (`utime + stime` of /proc/PID/stat). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
}

/** One round: `off` and `it` loaded at once on `path`, each on a CPU of its own. */
export async function pair(
  off: Running,
  it: Running,
  path: string,
  options: { seconds: number; connections: number; round: number },
): Promise<Pair> {
  const [offCpu, itCpu] = options.round % 2 === 0 ? [0, 1] : [1, 0];
  await pin(off.pid(), offCpu);
  await pin(it.pid(), itCpu);
  const cpuBefore = await Promise.all([cpuMs(off.pid()), cpuMs(it.pid())]);
  const load = { seconds: options.seconds, connections: options.connections };
  const [a, b] = await Promise.all([
    wrk(off.origin + path, { ...load, cpu: offCpu }),
    wrk(it.origin + path, { ...load, cpu: itCpu }),
  ]);
  const cpuAfter = await Promise.all([cpuMs(off.pid()), cpuMs(it.pid())]);
  const offCpuUs = (cpuAfter[0] - cpuBefore[0]) * 1000 / a.requests;
  const cpuUs = (cpuAfter[1] - cpuBefore[1]) * 1000 / b.requests;
  return {
    rpsRatio: b.rps / a.rps,
    cpuRatio: offCpuUs / cpuUs,
    offCpuUs,
    cpuUs,
    errors: b.socketErrors + b.non2xx3xx,
  };
}
