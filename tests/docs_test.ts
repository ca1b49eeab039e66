/**
 * @module
 * The docs hold to the framework: every link between the pages leads somewhere;
 * docs/architecture.md lists every folder of `lib/`; docs/settings.md lists exactly the variables
 * the settings read; the README stays a landing page. (That the docs' TypeScript compiles is
 * `tests/process/docs_code_test.ts`: it runs `deno check`. That the blocks showing the example's
 * files show them as they are is the example's own test, `tests/example/docs_test.ts`.)
 */
import assert from "node:assert/strict";
import { dirname, join, normalize } from "node:path";
import { readSettings } from "../lib/cli/settings.ts";
import { docFiles, fencedBlocks } from "./helpers/doc_blocks.ts";
import { PROJECT_ROOT } from "./helpers/project_copy.ts";

const read = (path: string) => Deno.readTextFile(join(PROJECT_ROOT, path));
const exists = (path: string) => Deno.stat(join(PROJECT_ROOT, path)).then(() => true, () => false);

Deno.test("the README is a landing page of at most 150 lines", async () => {
  const lines = (await read("README.md")).trimEnd().split("\n").length;
  assert.ok(lines <= 150, `README.md has ${lines} lines`);
});

Deno.test("every link between the docs leads to a page and a heading that exist", async () => {
  const broken: string[] = [];
  const anchors = new Map<string, Set<string>>();
  const anchorsOf = async (doc: string) => {
    if (!anchors.has(doc)) anchors.set(doc, headingAnchors(withoutCode(doc, await read(doc))));
    return anchors.get(doc)!;
  };
  for (const doc of await docFiles()) {
    const text = withoutCode(doc, await read(doc));
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split("#");
      const file = path ? normalize(join(dirname(doc), path)) : doc;
      if (!await exists(file)) broken.push(`${doc}: ${target} (no ${file})`);
      else if (anchor && file.endsWith(".md") && !(await anchorsOf(file)).has(anchor)) {
        broken.push(`${doc}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("the docs' tests of an event stream bound each read by time, and say what came", async () => {
  // An open stream sends nothing while nothing changes: a read bounded only by a count of reads
  // waited for the stream's renewal (minutes), then devalue's parse("null") said "Invalid input".
  const unbounded: string[] = [];
  for (const doc of await docFiles()) {
    for (const block of fencedBlocks(doc, await read(doc))) {
      if (!/\.getReader\(\)/.test(block.code) || !/event: /.test(block.code)) continue;
      if (!/setTimeout\(|AbortSignal\.timeout\(/.test(block.code)) {
        unbounded.push(`${doc}:${block.line}: no time bound on its reads`);
      }
      if (/\?\? "null"/.test(block.code)) unbounded.push(`${doc}:${block.line}: parse("null")`);
    }
  }
  assert.deepEqual(unbounded, []);
});

Deno.test("docs/architecture.md lists every folder of lib/, and only those", async () => {
  const folders: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(join(PROJECT_ROOT, dir))) {
      if (!entry.isDirectory) continue;
      folders.push(`${dir}/${entry.name}/`);
      await walk(`${dir}/${entry.name}`);
    }
  };
  await walk("lib");
  const doc = await read("docs/architecture.md");
  const listed = fencedBlocks("docs/architecture.md", doc)
    .flatMap((block) => block.code.split("\n"))
    .map((line) => /^(lib\/\S*\/)\s/.exec(line)?.[1])
    .filter((folder): folder is string => !!folder);
  assert.deepEqual(listed.toSorted(), folders.toSorted());
});

Deno.test("docs/settings.md lists exactly the variables the settings read", async () => {
  const names = new Set<string>();
  // A DSN, so that Sentry's settings beyond it are read too.
  readSettings((name) => {
    names.add(name);
    return name === "SENTRY_DSN" ? "https://key@sentry.example/1" : undefined;
  });
  const doc = await read("docs/settings.md");
  const section = doc.split("\n## ").find((part) => part.startsWith("The app's settings")) ?? "";
  const documented = [...section.matchAll(/^\| `([A-Z_]+)`/gm)].map((match) => match[1]);
  assert.deepEqual(documented.toSorted(), [...names].toSorted());
});

Deno.test("docs/testing.md names every option of TestClient", async () => {
  const source = await read("lib/testing/client.ts");
  const block = /export interface TestClientOptions \{([\s\S]*?)\n\}/.exec(source)?.[1] ?? "";
  const options = [...block.matchAll(/^ {2}(\w+)\??:/gm)].map((match) => match[1]);
  assert.ok(options.length > 0, "no options found in TestClientOptions");
  const doc = await read("docs/testing.md");
  const missing = options.filter((option) => !new RegExp(`\\b${option}\\b`).test(doc));
  assert.deepEqual(missing, [], "options docs/testing.md never names");
});

/** The text of a doc without its fenced blocks (their lines blanked). */
function withoutCode(doc: string, text: string): string {
  const lines = text.split("\n");
  for (const block of fencedBlocks(doc, text)) {
    const lineCount = block.code.split("\n").length - 1;
    for (let i = block.line - 2; i <= block.line - 1 + lineCount; i++) lines[i] = "";
  }
  return lines.join("\n");
}

/** The anchors GitHub makes of a doc's headings: lower case, punctuation dropped, `-` for spaces. */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, heading] of text.matchAll(/^#+ (.+)$/gm)) {
    const slug = heading.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}
