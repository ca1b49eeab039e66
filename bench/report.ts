/**
 * @module
 * The benchmark's verdict: every figure next to its target as PASS or MISS (or "info" for figures
 * without a target), printed as a Markdown table — the same table docs/performance.md keeps — and
 * the median the figures of repeated runs are summed up by.
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
