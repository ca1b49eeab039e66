/**
 * @module
 * `deno task kv:reindex <collection> [--batch N]`: a collection's index entries made again as the
 * app's code now declares them (`collection.reindex`, docs/data.md "Evolving a collection"), on
 * the store the settings name (`KV_PATH`, as for the server). The collection is found by its name
 * among those the app's modules declare: the route manifest is loaded (built first when the
 * sources changed), and with it every route, action and middleware module and what they import.
 * Progress goes to stderr, each collision and refused item the report lists (the first 100 of
 * each) to stdout as a JSON line, then a summary with the counts of all. Ctrl-C stops after the
 * item in hand, saying how far it got (with the collisions and refused items so far); the next run
 * goes on from there, and counts (not lists) what this one found. Exit 0 when done with nothing to
 * settle, 1 with collisions or refused items (or no such collection), 2 for a usage mistake, 130
 * when stopped.
 */
import { parseArgs } from "node:util";
import { collectionNames, collectionsNamed } from "../kv/collection/registry.ts";
import type { ReindexReport } from "../kv/collection/reindex.ts";
import { PROJECT_ROOT } from "./root.ts";
import { settingsOrExit } from "./settings.ts";
import { isStaleApart } from "./stale_build.ts";
import { storeOrExit } from "./store.ts";

const USAGE = "usage: deno task kv:reindex <collection> [--batch N]";

function fail(message: string, code = 1): never {
  console.error(`kv:reindex: ${message}`);
  Deno.exit(code);
}

/** `250 collisions (100 listed above)`, or `3 collisions` when all are listed. */
function counted(count: number, listed: number, what: string): string {
  return count > listed ? `${count} ${what} (${listed} listed above)` : `${count} ${what}`;
}

let parsed;
try {
  parsed = parseArgs({
    args: Deno.args,
    options: { batch: { type: "string" } },
    allowPositionals: true,
  });
} catch (error) {
  fail(`${(error as Error).message}\n${USAGE}`, 2);
}
const [name, ...extra] = parsed.positionals;
const batch = parsed.values.batch === undefined ? 100 : Number(parsed.values.batch);
if (name === undefined || extra.length > 0) fail(USAGE, 2);
if (!Number.isInteger(batch) || batch < 1 || batch > 1_000) fail("--batch is 1 to 1000", 2);

const settings = settingsOrExit();
if (await isStaleApart(PROJECT_ROOT, false)) {
  await (await import("./build_or_exit.ts")).buildApartOrExit(false);
}
// The manifest imports every module the app serves from, and they the collections they use.
await import(new URL("../../_build/manifest.gen.ts", import.meta.url).href);
const found = collectionsNamed(name);
if (found.length === 0) {
  fail(`the app declares no collection "${name}" (it declares: ${collectionNames().join(", ")})`);
}
if (found.length > 1) {
  fail(`the app declares "${name}" ${found.length} times: which indexes it has is not one answer`);
}

/** The report's collisions and refused items, a JSON line each, then its counts in one line. */
function tell(report: ReindexReport, ending: string): void {
  for (const collision of report.collisions) {
    console.log(JSON.stringify({ collision: { ...collision, value: String(collision.value) } }));
  }
  for (const refused of report.refused) console.log(JSON.stringify({ refused }));
  console.log(
    `${name}: ${report.items} items read, ${report.rewritten} indexed again, ` +
      `${report.removed} stale entries removed, ` +
      `${counted(report.collisionCount, report.collisions.length, "collisions")}, ` +
      `${counted(report.refusedCount, report.refused.length, "refused")}${ending}`,
  );
}

const kv = await storeOrExit(settings.kvPath);
const stop = new AbortController();
const interrupted = () => stop.abort(new Error("interrupted"));
Deno.addSignalListener("SIGINT", interrupted);
let code = 0;
let said = "";
// Given by `progress`, last when the run is stopped: how far it got.
let sofar = null as ReindexReport | null;
try {
  const report = await found[0].reindex(kv, {
    batch,
    signal: stop.signal,
    progress: (report) => {
      sofar = report;
      if (stop.signal.aborted) return;
      // Told after each batch: one that read no item and removed nothing (a walk of unchanged
      // index entries, the logs) would say the line before again.
      const { items, removed } = report;
      const line = `kv:reindex ${name}: ${removed} stale entries removed, ${items} items read`;
      if (line !== said) console.error(line);
      said = line;
    },
  });
  tell(report, report.resumed ? " (went on from a stopped run)" : "");
  code = report.collisionCount + report.refusedCount > 0 ? 1 : 0;
} catch (error) {
  if (!stop.signal.aborted) throw error;
  if (sofar) tell(sofar, " so far (stopped)");
  console.error(
    `kv:reindex ${name}: stopped; run it again to go on from the last batch done ` +
      "(it counts, not lists, the collisions and refused items found so far)",
  );
  code = 130;
} finally {
  Deno.removeSignalListener("SIGINT", interrupted);
  kv.close();
}
Deno.exit(code);
