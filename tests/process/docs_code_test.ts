/**
 * @module
 * Every TypeScript block of README.md and docs/*.md compiles and is formatted: the blocks are
 * written into a built copy of the framework's test app — never the project's own routes, which a
 * team changes, or the example, which it removes — each at the path its first line names
 * (`// routes/notes.tsx`) or as a scratch file at the root, then `deno check` and
 * `deno fmt --check` run on them. A block needs nothing but the framework and other blocks. A
 * stylesheet a block imports is the CSS block that names it (`/* routes/(info)/about.css …`), or
 * an empty one where no block shows it; the copy is built again with the blocks in it, so that
 * Deno loads their stylesheets as the build maps them (`deno.json`'s entries) and a block may
 * import the manifest, as tests do. A failure names the doc and the line.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize } from "node:path";
import {
  type CodeBlock,
  docFiles,
  stylesheetBlocks,
  typescriptBlocks,
} from "../helpers/doc_blocks.ts";
import { builtFixture } from "../helpers/built_copy.ts";
import { copyProject, PROJECT_ROOT } from "../helpers/project_copy.ts";

Deno.test("the docs' TypeScript blocks compile and are formatted", async () => {
  const blocks: CodeBlock[] = [];
  const stylesheets: CodeBlock[] = [];
  for (const doc of await docFiles()) {
    const text = await Deno.readTextFile(join(PROJECT_ROOT, doc));
    blocks.push(...typescriptBlocks(doc, text));
    stylesheets.push(...stylesheetBlocks(doc, text));
  }
  assert.ok(blocks.length >= 1, `only ${blocks.length} TypeScript blocks found`);

  const byPath = new Map<string, CodeBlock>();
  for (const block of blocks) {
    const other = byPath.get(block.path);
    assert.ok(
      !other,
      `${block.doc}:${block.line} and ${other?.doc}:${other?.line} both are ${block.path}`,
    );
    byPath.set(block.path, block);
  }

  await using copy = await copyProject({ from: await builtFixture(), withBuild: true });
  for (const block of [...blocks, ...stylesheets]) await copy.write(block.path, block.code);
  for (const sheet of blocks.flatMap(importedStylesheets)) {
    if (!stylesheets.some((block) => block.path === sheet)) await copy.write(sheet, "");
  }
  const build = await deno(copy.root, ["task", "build"], { NODE_ENV: "production" });
  assert.ok(build.success, `deno task build failed with the docs' code:\n${build.output}`);
  const paths = blocks.map((block) => block.path);
  // Deno names files by their real path.
  const root = await Deno.realPath(copy.root);
  const inDocs = (output: string) => whereInDocs(output, root, byPath);

  const check = await deno(copy.root, ["check", ...paths]);
  assert.ok(check.success, `deno check failed on the docs' code:\n${inDocs(check.output)}`);
  const fmt = await deno(copy.root, ["fmt", "--check", ...paths]);
  assert.ok(fmt.success, `deno fmt --check failed on the docs' code:\n${inDocs(fmt.output)}`);
});

/** The stylesheets `block` imports (`"./x.css"`, `"@/x.css"`), by path from the root. */
function importedStylesheets(block: CodeBlock): string[] {
  const specifiers = block.code.matchAll(/^import\s+(?:[^"';]*\s+from\s+)?"([^"]+\.css)";/gm);
  return [...specifiers].flatMap(([, specifier]) => {
    if (specifier.startsWith("@/")) return [specifier.slice(2)];
    if (specifier.startsWith(".")) return [normalize(join(dirname(block.path), specifier))];
    return [];
  });
}

async function deno(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ success: boolean; output: string }> {
  const { success, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1", ...env },
  }).output();
  const decoder = new TextDecoder();
  const output = decoder.decode(stdout) + decoder.decode(stderr);
  // Without the list of files checked: what failed is what matters.
  return { success, output: output.replace(/^Check .*\n/gm, "") };
}

/** Deno's output with every place in the copy (`file:///…/routes/x.tsx:3:7`) named in its doc. */
function whereInDocs(output: string, root: string, byPath: Map<string, CodeBlock>): string {
  const prefix = (root.endsWith("/") ? root : `${root}/`).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const place = new RegExp(`(?:file://)?${prefix}([^\\s:]+)(?::(\\d+)(?::(\\d+))?)?`, "g");
  return output.replace(place, (whole, path: string, line?: string, column?: string) => {
    const block = byPath.get(path);
    if (!block) return whole;
    if (!line) return `${block.doc}:${block.line} (the block that is ${path})`;
    return `${block.doc}:${block.line + Number(line) - 1}${column ? `:${column}` : ""}`;
  });
}
