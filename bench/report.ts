/**
 * @module
 * The benchmark's verdict: every figure next to its target as PASS or MISS (or "info" for figures
 * without a target), printed as a Markdown table — the same table docs/performance.md keeps — and
 * the median the figures of repeated runs are summed up by, and the ratio of two servers measured
 * side by side over rounds that trade CPUs.
 */

export interface Row {
  measure: string;
  value: string;
  target: string;
  /** undefined: a figure without a target. */
  pass?: boolean;
}

export function table(rows: Row[]): string {
  const lines = [
    "| Measure | Value | Target | Result |",
    "| --- | --: | --: | :-: |",
    ...rows.map((row) =>
      `| ${row.measure} | ${row.value} | ${row.target} | ${
        row.pass === undefined ? "info" : row.pass ? "PASS" : "**MISS**"
      } |`
    ),
  ];
  return lines.join("\n");
}

export const fmt = {
  rps: (n: number) => n.toFixed(0),
  ms: (n: number) => n < 10 ? n.toFixed(2) + " ms" : n.toFixed(0) + " ms",
  ratio: (n: number) => n.toFixed(2) + "×",
  kb: (bytes: number) => (bytes / 1024).toFixed(1) + " KB",
  mb: (n: number) => n.toFixed(0) + " MB",
  ns: (n: number) => n < 1000 ? n.toFixed(0) + " ns" : (n / 1000).toFixed(1) + " µs",
};

/** The middle of `values` (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle)
    ? (sorted[middle - 1] + sorted[middle]) / 2
    : sorted[Math.floor(middle)];
}

/**
 * The rounds of `pairs` pairs that trade CPUs (round `i` gives side A CPU `i % 2`), for
 * {@link pairedRatio}: `BENCH_ROUNDS` counts pairs, so that no value of it can leave a round
 * unpaired, which `pairedRatio` refuses only once every round has run.
 */
export function pairRounds(pairs: number): number[] {
  if (!Number.isInteger(pairs) || pairs < 1) {
    throw new RangeError(`BENCH_ROUNDS: ${pairs} is not a number of pairs of rounds (1, 2, ...)`);
  }
  return Array.from({ length: 2 * pairs }, (_, round) => round);
}

/**
 * The ratio of two servers measured side by side over rounds that trade CPUs (even rounds one way,
 * odd rounds the other): the geometric mean of each such pair of rounds, in which the two CPUs'
 * speeds cancel, then the median of those. On a host whose CPUs run at different speeds a single
 * round's ratio follows the CPU each side had (0.56× and 1.32× in turn for one page, one run), and
 * the median of those rounds lands between the two modes, wherever the truth is; a pair does not.
 */
export function pairedRatio(ratios: number[]): number {
  if (ratios.length === 0 || ratios.length % 2 !== 0) {
    throw new RangeError(`rounds come in pairs that trade CPUs: ${ratios.length} rounds`);
  }
  const pairs: number[] = [];
  for (let i = 0; i < ratios.length; i += 2) pairs.push(Math.sqrt(ratios[i] * ratios[i + 1]));
  return median(pairs);
}
