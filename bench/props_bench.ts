/**
 * @module
 * Micro-benchmark: island props through devalue — the counter page's rich props (Date, Set, Map,
 * BigInt, URL) serialized on the server and parsed back in the browser, and a 100-row list.
 */
import { deserializeProps, serializeProps } from "../lib/shared/props.ts";

const counter = {
  start: 3,
  since: new Date("2026-01-01T00:00:00Z"),
  tags: new Set(["react", "deno"]),
  scores: new Map([["ada", 10n ** 20n]]),
  home: new URL("http://127.0.0.1:8000/"),
};
const rows = {
  rows: Array.from({ length: 100 }, (_, i) => ({ id: i, title: `Row ${i}`, done: i % 3 === 0 })),
};
const counterText = serializeProps("Counter", counter);

Deno.bench("serialize counter props", { group: "props" }, () => {
  serializeProps("Counter", counter);
});
Deno.bench("serialize 100 rows", { group: "props" }, () => {
  serializeProps("List", rows);
});
Deno.bench("deserialize counter props", { group: "props" }, () => {
  deserializeProps(counterText);
});
