/**
 * @module
 * Memory under load, side by side with the limit: the bare server and a framework server loaded at
 * once on the 100-item page (`/list`), each with its `wrk` on a CPU of its own, trading CPUs every
 * round, while the resident set (`VmRSS`) of both is sampled every 250 ms. Measured at once, both
 * see the same machine, so the ratio of their peaks holds where a run of each alone would not (the
 * garbage a server leaves between collections follows how fast it is served). Also the growth of
 * the framework's median RSS from the second round to the last (a leak shows there) and its
 * throughput beside the limit's while it was measured.
 */
import { pin, rssMb, type Running } from "./process.ts";
import { pairedRatio } from "./report.ts";
import { wrk } from "./wrk.ts";

export interface MemoryRound {
  peakMb: number;
  medianMb: number;
  limitPeakMb: number;
  rps: number;
  limitRps: number;
}

export interface MemoryOptions {
  /** The whole run, split into `rounds` rounds. */
  seconds: number;
  rounds: number;
  connections: number;
  path?: string;
}

const median = (values: number[]) => values.toSorted((a, b) => a - b)[values.length >> 1];

/** `it` beside `limit`, round after round; the servers are left pinned to all CPUs. */
export async function memorySideBySide(
  limit: Running,
  it: Running,
  { seconds, rounds, connections, path = "/list" }: MemoryOptions,
): Promise<MemoryRound[]> {
  const results: MemoryRound[] = [];
  for (let round = 0; round < rounds; round++) {
    const [limitCpu, itCpu] = round % 2 === 0 ? [0, 1] : [1, 0];
    await pin(limit.pid(), limitCpu);
    await pin(it.pid(), itCpu);
    const samples: number[] = [];
    const limitSamples: number[] = [];
    const sampler = setInterval(async () => {
      const [a, b] = await Promise.all([rssMb(it.pid()), rssMb(limit.pid())]);
      samples.push(a);
      limitSamples.push(b);
    }, 250);
    const load = { seconds: seconds / rounds, connections };
    const [a, b] = await Promise.all([
      wrk(it.origin + path, { ...load, cpu: itCpu }),
      wrk(limit.origin + path, { ...load, cpu: limitCpu }),
    ]);
    clearInterval(sampler);
    results.push({
      peakMb: Math.max(...samples),
      medianMb: median(samples),
      limitPeakMb: Math.max(...limitSamples),
      rps: a.rps,
      limitRps: b.rps,
    });
  }
  for (const server of [limit, it]) await pin(server.pid(), "all");
  return results;
}

/**
 * The peaks over every round, their ratio, the growth from the 2nd round's median to the last's
 * (with an even number of rounds, both on the same CPUs), and the req/s ratio (`pairedRatio`).
 */
export function memorySummary(rounds: MemoryRound[]) {
  const peakMb = Math.max(...rounds.map((r) => r.peakMb));
  const limitPeakMb = Math.max(...rounds.map((r) => r.limitPeakMb));
  return {
    peakMb,
    limitPeakMb,
    ratio: peakMb / limitPeakMb,
    growth: rounds.at(-1)!.medianMb / rounds[Math.min(1, rounds.length - 1)].medianMb - 1,
    rpsRatio: pairedRatio(rounds.map((r) => r.rps / r.limitRps)),
  };
}
