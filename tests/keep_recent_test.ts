/**
 * What a build keeps of earlier builds' files (`keepRecent`, lib/build/mod.ts): the island chunks
 * under `_build/static/` and the server bundle's chunks under `_build/server/` that one of the
 * last three builds wrote stay (a server still running one of them may load one later), older
 * ones go, and the history says which build wrote what.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { keepRecent } from "../lib/build/mod.ts";
import { filesBelow } from "../lib/build/files.ts";

Deno.test("a build keeps the files of the last three builds and deletes older ones", async () => {
  const dir = await Deno.makeTempDir({ prefix: "keep-recent-" });
  try {
    const history = join(dir, "server-builds.json");
    const out = join(dir, "server");
    await Deno.mkdir(out);
    const builds = [1, 2, 3, 4].map((n) => ["serve.js", `chunk-${n}.js`, `chunk-${n}.js.map`]);
    for (const files of builds) {
      for (const file of files) await Deno.writeTextFile(join(out, file), file);
      await keepRecent(out, history, files);
    }
    assert.deepEqual((await filesBelow(out)).toSorted(), [
      "chunk-2.js",
      "chunk-2.js.map",
      "chunk-3.js",
      "chunk-3.js.map",
      "chunk-4.js",
      "chunk-4.js.map",
      "serve.js",
    ]);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(history)), builds.slice(1).toReversed());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
