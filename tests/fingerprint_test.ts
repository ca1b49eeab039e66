/**
 * @module
 * The start's freshness check (`lib/build/fingerprint.ts`) on a tree of the test's own: it follows
 * what the last build recorded of its import graphs (a `components/` module counts, in any folder),
 * lists the folders the build scans and serves afresh (a new file there counts before anything
 * imports it), and covers `deno.json` and the lockfile; files nothing imports do not count.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildDir, fingerprint } from "../lib/build/fingerprint.ts";
import { type Sources, SOURCES_FILE } from "../lib/build/graph.ts";

const FILES: Record<string, string> = {
  "deno.json": "{}\n",
  "deno.lock": '{ "version": "5" }\n',
  "routes/index.tsx": 'import { Card } from "@/components/Card.tsx";\n',
  "islands/Clock.tsx": 'import { tick } from "@/shared/time.ts";\n',
  "components/Card.tsx": "export const Card = () => null;\n",
  "components/Unused.tsx": "export const Unused = () => null;\n",
  "shared/time.ts": "export const tick = 1;\n",
  "static/styles.css": "body {}\n",
  "docs/notes.md": "# Notes\n",
};

/** What a build of `FILES` records: its graphs reached the card and the clock's helper. */
const RECORDED: Sources = {
  server: ["components/Card.tsx", "islands/Clock.tsx", "routes/index.tsx", "shared/time.ts"],
  browser: ["islands/Clock.tsx", "shared/time.ts"],
};

/** `FILES` in a temp folder, as a build of them left it. */
async function tree(): Promise<{ root: string } & AsyncDisposable> {
  const root = await Deno.makeTempDir({ prefix: "fingerprint-" });
  for (const [path, text] of Object.entries(FILES)) await write(root, path, text);
  await write(root, `${buildDir(false)}/${SOURCES_FILE}`, JSON.stringify(RECORDED));
  return { root, [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }) };
}

async function write(root: string, path: string, text: string): Promise<void> {
  await Deno.mkdir(join(root, path, ".."), { recursive: true });
  await Deno.writeTextFile(join(root, path), text);
}

Deno.test("an edit to any module the graphs reached, in any folder, changes the fingerprint", async () => {
  for (const path of ["components/Card.tsx", "shared/time.ts", "routes/index.tsx"]) {
    await using tmp = await tree();
    const { root } = tmp;
    const before = await fingerprint(root, false);
    await write(root, path, FILES[path] + "// edited\n");
    assert.notEqual(await fingerprint(root, false), before, path);
  }
});

Deno.test("the config, the lockfile, static/ and a new file under routes/ count too", async () => {
  const edits: [string, string][] = [
    ["deno.json", '{ "imports": {} }\n'],
    ["deno.lock", '{ "version": "5", "npm": {} }\n'],
    ["static/styles.css", "body { color: red }\n"],
    ["routes/about.tsx", "export default () => null;\n"],
    ["islands/Added.tsx", "export default () => null;\n"],
  ];
  for (const [path, text] of edits) {
    await using tmp = await tree();
    const { root } = tmp;
    const before = await fingerprint(root, false);
    await write(root, path, text);
    assert.notEqual(await fingerprint(root, false), before, path);
  }
});

Deno.test("a recorded module removed changes it; what nothing imports does not", async () => {
  await using tmp = await tree();
  const { root } = tmp;
  const before = await fingerprint(root, false);
  await write(root, "components/Unused.tsx", "export const Unused = () => 1;\n");
  await write(root, "docs/notes.md", "# Other notes\n");
  await write(root, "components/New.tsx", "export const New = () => null;\n");
  assert.equal(await fingerprint(root, false), before, "none of those is a source yet");
  await Deno.remove(join(root, "components/Card.tsx"));
  assert.notEqual(await fingerprint(root, false), before);
});

Deno.test("the fingerprint a build recorded is the one the check computes", async () => {
  await using tmp = await tree();
  const { root } = tmp;
  assert.equal(
    await fingerprint(root, false, RECORDED),
    await fingerprint(root, false),
    "read back from sources.json",
  );
  assert.notEqual(await fingerprint(root, true), await fingerprint(root, false));
});
