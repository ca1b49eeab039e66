/**
 * @module
 * No import cycles among the modules of `lib/`: the module graph `deno info` reports for every
 * file of `lib/` at once, walked along the imports that run (static and dynamic). Type-only
 * imports (`import type`) are left out: they are erased before anything runs, so they cannot
 * make one module run before another it needs — nor load anything at all.
 *
 * Between folders, too, imports point one way: `server/` aside, and but for the knots `KNOTS` lists.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { filesBelow } from "../../lib/build/files.ts";
import { PROJECT_ROOT } from "../helpers/project_copy.ts";

interface Dependency {
  specifier: string;
  code?: { specifier: string };
}

interface ModuleInfo {
  specifier: string;
  dependencies?: Dependency[];
}

/** Every module of `lib/` and what each imports for its code, by file URL. */
async function libGraph(): Promise<Map<string, string[]>> {
  const lib = join(PROJECT_ROOT, "lib");
  const files = (await filesBelow(lib)).filter((file) => /\.tsx?$/.test(file));
  const dir = await Deno.makeTempDir({ prefix: "lib-graph-" });
  try {
    // One root that imports them all: `deno info` takes one module.
    const entry = join(dir, "all.ts");
    const urls = files.map((file) => new URL(`file://${join(lib, file)}`).href);
    await Deno.writeTextFile(entry, urls.map((url) => `import ${JSON.stringify(url)};`).join("\n"));
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", join(PROJECT_ROOT, "deno.json"), entry],
      cwd: PROJECT_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    const { modules }: { modules: ModuleInfo[] } = JSON.parse(new TextDecoder().decode(stdout));
    const prefix = new URL(`file://${lib}/`).href;
    const graph = new Map<string, string[]>();
    for (const module of modules) {
      if (!module.specifier.startsWith(prefix)) continue;
      const imports = (module.dependencies ?? []).flatMap((dep) =>
        dep.code?.specifier.startsWith(prefix) ? [dep.code.specifier] : []
      );
      graph.set(module.specifier, imports);
    }
    assert.equal(graph.size, files.length, "every file of lib/ is in the graph");
    return graph;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The cycles found by a depth-first walk, each as the path of files that closes it. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (module: string) => {
    const at = path.indexOf(module);
    if (at >= 0) {
      cycles.push([...path.slice(at), module]);
      return;
    }
    if (done.has(module)) return;
    path.push(module);
    for (const next of graph.get(module) ?? []) visit(next);
    path.pop();
    done.add(module);
  };
  for (const module of graph.keys()) visit(module);
  return cycles;
}

Deno.test("lib/ has no import cycles", async () => {
  const graph = await libGraph();
  const edges = [...graph.values()].reduce((sum, imports) => sum + imports.length, 0);
  assert.ok(edges > graph.size, `a graph with edges to walk: ${edges}`);
  const lib = new URL(`file://${join(PROJECT_ROOT, "lib")}/`).href;
  const cycles = cyclesOf(graph).map((cycle) =>
    cycle.map((url) => url.slice(lib.length)).join(" → ")
  );
  assert.deepEqual(cycles, []);
});

Deno.test("the cycle finder finds a cycle, and only one", () => {
  const graph = new Map([["a", ["b"]], ["b", ["c", "d"]], ["c", ["a"]], ["d", []]]);
  assert.deepEqual(cyclesOf(graph), [["a", "b", "c", "a"]]);
  assert.deepEqual(cyclesOf(new Map([["a", ["b"]], ["b", []], ["c", ["b"]]])), []);
});

/** A folder of `lib/` (a subfolder is part of its parent's concern), or "" for the entry points. */
function folderOf(path: string): string {
  const slash = path.indexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

/** The graph between folders, from one between paths relative to `lib/`. */
function foldersOf(graph: Map<string, string[]>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [module, imports] of graph) {
    const from = folderOf(module);
    const to = folders.get(from) ?? new Set();
    for (const target of imports) if (folderOf(target) !== from) to.add(folderOf(target));
    folders.set(from, to);
  }
  return new Map([...folders].map(([folder, to]) => [folder, [...to]]));
}

/** The groups of nodes that reach one another (Tarjan's components), those of more than one. */
function knotsOf(graph: Map<string, string[]>): string[][] {
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const knots: string[][] = [];
  const visit = (node: string) => {
    order.set(node, order.size);
    low.set(node, order.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!order.has(next)) visit(next);
      if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, low.get(next)!));
    }
    if (low.get(node) !== order.get(node)) return;
    const knot = stack.splice(stack.indexOf(node));
    if (knot.length > 1) knots.push(knot.sort());
  };
  for (const node of graph.keys()) if (!order.has(node)) visit(node);
  return knots.sort();
}

/**
 * The folder cycles there are. `server/` is left out of the walk: it holds both the app's
 * composition (`app.tsx` imports every concern) and the request's primitives every concern uses
 * (`internals.ts`, `scope.ts`, `log.ts`), so every folder reaches it and it reaches them; until
 * those part, a cycle through it says nothing. Every other cycle is one of these, or a defect.
 */
const KNOTS = [
  // kv/jobs/ (the job runner, in kv/) names failures by errors/digest.ts, and
  // errors/repeats_kv.ts commits with kv/commit.ts.
  ["errors", "kv"],
  // Every .tsx of render/ is compiled against the JSX runtime (jsx/), which makes islands
  // (islands/), which read the page's RenderContext (render/context.ts).
  ["islands", "jsx", "render"],
];

Deno.test("the folders of lib/ outside server/ import one another one way, but for the known knots", async () => {
  const lib = new URL(`file://${join(PROJECT_ROOT, "lib")}/`).href;
  const graph = new Map(
    [...(await libGraph())].map(([module, imports]) => [
      module.slice(lib.length),
      imports.map((target) => target.slice(lib.length)),
    ]),
  );
  const folders = foldersOf(graph);
  assert.ok(folders.size > 15, `the folders: ${[...folders.keys()]}`);
  const withoutServer = new Map(
    [...folders].filter(([folder]) => folder !== "server").map((
      [folder, to],
    ) => [folder, to.filter((target) => target !== "server")]),
  );
  assert.deepEqual(knotsOf(withoutServer), KNOTS);
});

Deno.test("the knot finder finds each group that reaches itself, and folders merge subfolders", () => {
  const graph = new Map([
    ["a", ["b"]],
    ["b", ["c", "d"]],
    ["c", ["a"]],
    ["d", ["e"]],
    ["e", ["d"]],
    ["f", ["a"]],
  ]);
  assert.deepEqual(knotsOf(graph), [["a", "b", "c"], ["d", "e"]]);
  assert.deepEqual(knotsOf(new Map([["a", ["b"]], ["b", []]])), []);
  const folders = foldersOf(
    new Map([["kv/collection/x.ts", ["kv/y.ts", "mod.ts"]], ["kv/y.ts", []], ["mod.ts", []]]),
  );
  assert.deepEqual(folders, new Map([["kv", [""]], ["", []]]));
});

Deno.test("lib/server/internals.ts names every module that declares a field of Internals", async () => {
  const lib = join(PROJECT_ROOT, "lib");
  const internals = join(lib, "server/internals.ts");
  const declaring = new Set<string>();
  for (const file of await filesBelow(lib)) {
    const path = join(lib, file);
    if (!/\.tsx?$/.test(file) || path === internals) continue;
    const text = await Deno.readTextFile(path);
    if (/declare module "[./]*(server\/)?internals\.ts"\s*\{\s*interface Internals\b/.test(text)) {
      declaring.add(path);
    }
  }
  assert.ok(declaring.size > 5, `found the modules that declare fields: ${[...declaring]}`);
  const named = new Set(
    [...(await Deno.readTextFile(internals)).matchAll(/^import type \{\} from "([^"]+)";$/gm)]
      .map(([, specifier]) => join(lib, "server", specifier)),
  );
  // A field whose module is missing here is unknown to a program that reads it without that module.
  assert.deepEqual([...declaring].sort(), [...named].sort());
});
