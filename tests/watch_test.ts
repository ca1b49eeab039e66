/**
 * @module
 * `deno task dev`'s watcher (`lib/dev/watch.ts`) on a tree of the test's own: it sees the whole
 * project — a file in any folder, a folder made after it started, a top-level file such as
 * `deno.json` — but nothing under the folders that are never sources (`node_modules`, `_build`).
 * Each wait is for the watcher's own report, bounded; what it must not report is checked once a
 * later change it must report has arrived.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { watchProject } from "../lib/dev/watch.ts";

const IGNORED = new Set(["_build", "node_modules", ".data", ".git"]);
/** Bound on one report: the watcher settles for 30 ms; the machine is shared. */
const REPORT_MS = 10_000;

Deno.test("the watcher sees every folder of the project but those that are never sources", async () => {
  const root = await Deno.makeTempDir({ prefix: "watch-" });
  const write = async (path: string, text = "export {};\n") => {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  };
  await write("deno.json", "{}\n");
  await write("routes/index.tsx");
  await write("node_modules/react/index.js");
  await write("_build/manifest.gen.ts");

  const reports: string[][] = [];
  let arrived = () => {};
  using _watcher = watchProject(root, IGNORED, (files) => {
    reports.push(files.map((file) => relative(root, file)).sort());
    arrived();
  });
  /** Runs `change`, then waits for the next report. */
  const reported = async (change: () => Promise<unknown>): Promise<string[]> => {
    const next = new Promise<void>((resolve) => arrived = resolve);
    const count = reports.length;
    await change();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      next,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no report in ${REPORT_MS} ms`)), REPORT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    return reports.slice(count).flat();
  };

  try {
    assert.deepEqual(await reported(() => write("routes/index.tsx", "// edited\n")), [
      "routes/index.tsx",
    ]);
    // A folder made after the watcher started: its first file, and later edits.
    assert.deepEqual(await reported(() => write("components/Card.tsx")), ["components/Card.tsx"]);
    assert.deepEqual(await reported(() => write("components/Card.tsx", "// edited\n")), [
      "components/Card.tsx",
    ]);
    assert.deepEqual(await reported(() => write("deno.json", '{ "imports": {} }\n')), [
      "deno.json",
    ]);
    // Packages and the build's output: no report, as the next change's report shows.
    const next = await reported(async () => {
      await write("node_modules/react/index.js", "// edited\n");
      await write("_build/manifest.gen.ts", "// edited\n");
      await new Promise((resolve) => setTimeout(resolve, 100));
      await write("lib/helpers.ts");
    });
    assert.deepEqual(next, ["lib/helpers.ts"]);
    assert.deepEqual(await reported(() => Deno.remove(join(root, "components/Card.tsx"))), [
      "components/Card.tsx",
    ]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
