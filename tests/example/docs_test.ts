/**
 * @module
 * The docs show the example's files as they are: a TypeScript block whose first line names a file
 * of the example (`// routes/counter.tsx`) holds that file's text. The files a team changes on its
 * first day — the document (`_app.tsx`), the root layout, the home page — are left out: a doc may
 * show them as they were, and a team's own version is no mistake. Goes with the example.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { docFiles, typescriptBlocks } from "../helpers/doc_blocks.ts";
import { PROJECT_ROOT } from "../helpers/project_copy.ts";

const TEAMS_OWN = new Set(["routes/_app.tsx", "routes/_layout.tsx", "routes/index.tsx"]);

const read = (path: string) => Deno.readTextFile(join(PROJECT_ROOT, path));
const exists = (path: string) => Deno.stat(join(PROJECT_ROOT, path)).then(() => true, () => false);

Deno.test("a code block that names a file of the example shows it as it is", async () => {
  let compared = 0;
  for (const doc of await docFiles()) {
    for (const block of typescriptBlocks(doc, await read(doc))) {
      if (block.path.startsWith("_doc_") || TEAMS_OWN.has(block.path)) continue;
      if (!await exists(block.path)) continue;
      const file = await read(block.path);
      const shown = file.startsWith("// ") ? block.code : block.code.replace(/^.*\n/, "");
      assert.equal(shown, file, `${doc}:${block.line} differs from ${block.path}`);
      compared++;
    }
  }
  assert.ok(compared > 0, "no block shows a file of the example");
});
