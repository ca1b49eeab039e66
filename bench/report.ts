/**
 * @module
 * The benchmark's verdict: every figure next to its target as PASS or MISS (or "info" for figures
 * without a target), printed as a Markdown table — the same table docs/performance.md keeps.
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
