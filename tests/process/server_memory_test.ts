/**
 * @module
 * What the serving process holds: a server that had to build as it started (`deno task start` on a
 * fresh clone or after an edit) keeps none of the build's code — no Lightning CSS, no Tailwind
 * native module mapped into it — since it built in a process of its own: V8 never unloads a
 * module, so a build run in the server's process stayed in its memory for as long as it served
 * (50 MB more resident; `docs/performance.md`, "Memory").
 */
import assert from "node:assert/strict";
import { copyProject } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";

/** The shared objects mapped into a process (`/proc/<pid>/maps`), by file name. */
async function mappedFiles(pid: number): Promise<Set<string>> {
  const maps = await Deno.readTextFile(`/proc/${pid}/maps`);
  return new Set(maps.split("\n").flatMap((line) => /\s(\/\S+)$/.exec(line)?.[1] ?? []));
}

Deno.test("a server that builds as it starts holds none of the build's native modules", async () => {
  // A copy has no `_build/`: the server builds first.
  await using project = await copyProject();
  await using server = await startServer({}, { root: project.root });
  const page = await server.fetch("/");
  assert.equal(page.status, 200);
  await page.body?.cancel();
  await Deno.stat(`${project.root}/_build/manifest.gen.ts`); // it did build

  const native = [...await mappedFiles(server.pid)].filter((file) => file.endsWith(".node"));
  assert.deepEqual(native, [], "no Node-API module (lightningcss, @tailwindcss/oxide) mapped");
  // …and the build's processes are gone too (esbuild's service).
  const children = await Deno.readTextFile(`/proc/${server.pid}/task/${server.pid}/children`);
  assert.equal(children.trim(), "");
});
