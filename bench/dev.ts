/**
 * @module
 * `deno run -A bench/dev.ts`: the dev loop's figures, on a copy of the framework's test app
 * (`tests/fixture/`, with a stylesheet of its own imported by `/counter`), against their targets —
 * the first start of `deno task dev` (spawn to the first page served), the rebuild after a save
 * (as the dev server logs it), save → island updated in Chromium, state kept, save → stylesheet
 * swapped, and save a route → page reloaded. Medians of BENCH_RUNS (5) starts and BENCH_EDITS (7)
 * edits; the very first start on a fresh copy (Deno's and the refresh transform's caches cold) is
 * reported apart.
 */
import { join } from "node:path";
import { launchBrowser } from "../tests/helpers/browser.ts";
import { copyProject } from "../tests/helpers/project_copy.ts";
import { startServer, type TestServer } from "../tests/helpers/server.ts";
import { fmt, median, type Row, table } from "./report.ts";

const RUNS = Number(Deno.env.get("BENCH_RUNS") ?? 5);
const EDITS = Number(Deno.env.get("BENCH_EDITS") ?? 7);
const TARGET = { startMs: 1500, rebuildMs: 300, updateMs: 500 };

await using copy = await copyProject();
// A stylesheet the page imports, to edit: the test app's own pages import none.
await copy.write("routes/counter.css", "h1 { font-weight: 700; }\n");
await copy.write(
  "routes/counter.tsx",
  `import "./counter.css";\n${await Deno.readTextFile(join(copy.root, "routes/counter.tsx"))}`,
);

/** Spawn → the first `GET /counter` answered 200, in ms. */
async function firstStart(): Promise<number> {
  const started = performance.now();
  await using server = await startServer({ NODE_ENV: "development" }, {
    root: copy.root,
    script: "lib/cli/dev.ts",
  });
  for (;;) {
    const res = await server.fetch("/counter").catch(() => undefined);
    await res?.body?.cancel();
    if (res?.status === 200) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const cold = await firstStart();
const starts: number[] = [];
for (let run = 0; run < RUNS; run++) starts.push(await firstStart());

await using server = await startServer({ NODE_ENV: "development" }, {
  root: copy.root,
  script: "lib/cli/dev.ts",
});
await using browser = await launchBrowser();
const page = await browser.newPage();
await page.goto(server.origin + "/counter");

const island = join(copy.root, "islands/Counter.tsx");
const pristine = await Deno.readTextFile(island);
const updates: number[] = [];
for (let edit = 1; edit <= EDITS; edit++) {
  const label = `since (edit ${edit})`;
  updates.push(
    await savedToShown(
      () => Deno.writeTextFile(island, pristine.replace("<dt>since</dt>", `<dt>${label}</dt>`)),
      (label) => document.querySelector("dt")?.textContent === label && Date.now(),
      label,
    ),
  );
}
const stylesheet = join(copy.root, "routes/counter.css");
const css = await Deno.readTextFile(stylesheet);
const swaps: number[] = [];
for (let edit = 1; edit <= EDITS; edit++) {
  const color = `rgb(${edit}, 2, 3)`;
  swaps.push(
    await savedToShown(
      () => Deno.writeTextFile(stylesheet, `${css}h1 { color: ${color}; }\n`),
      (color) => getComputedStyle(document.querySelector("h1")!).color === color && Date.now(),
      color,
    ),
  );
}
const route = join(copy.root, "routes/counter.tsx");
const page0 = await Deno.readTextFile(route);
const reloads: number[] = [];
for (let edit = 1; edit <= EDITS; edit++) {
  await new Promise((resolve) => setTimeout(resolve, 300));
  const savedAt = Date.now();
  const loaded = page.waitForEvent("load", { timeout: 20_000 });
  await Deno.writeTextFile(route, page0.replace("<h1>An island</h1>", `<h1>Edit ${edit}</h1>`));
  await loaded;
  reloads.push(Date.now() - savedAt);
}
const rebuilds = builds(server).slice(1); // the first is the start's

/** ms from a save to `shownAt(arg)` giving the page's time, checked at every frame. */
async function savedToShown(
  save: () => Promise<void>,
  shownAt: (arg: string) => number | false,
  arg: string,
): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 300)); // the previous change has settled
  const at = page.waitForFunction(shownAt, arg, { polling: "raf", timeout: 20_000 });
  const savedAt = Date.now();
  await save();
  return (await (await at).jsonValue() as number) - savedAt;
}

function builds(server: TestServer): number[] {
  return server.stdout.flatMap((line) => {
    const ms = line.match(/^dev: built in (\d+) ms$/)?.[1];
    return ms ? [Number(ms)] : [];
  });
}

const row = (measure: string, runs: number[], target?: number): Row => ({
  measure: `${measure} (${runs.map(Math.round).join(", ")})`,
  value: fmt.ms(median(runs)),
  target: target === undefined ? "" : `≤ ${target} ms`,
  pass: target === undefined ? undefined : median(runs) <= target,
});
console.log(table([
  row("first start of `deno task dev`, fresh copy", [cold]),
  row("first start, median", starts, TARGET.startMs),
  row("rebuild after a save, median", rebuilds, TARGET.rebuildMs),
  row("save → island updated in Chromium, state kept, median", updates, TARGET.updateMs),
  row("save → stylesheet swapped, median", swaps),
  row("save a route → the server restarted and the page reloaded, median", reloads),
]));
