/**
 * @module
 * The docs' code blocks, for the tests that hold them to the code. A ```ts or ```tsx block whose
 * first line is a comment naming a path (`// routes/notes.tsx`) is that file of the project, so its
 * relative imports resolve; any other is a scratch file at the project root. A fenced CSS block
 * whose first line is a comment naming a path (`islands/Counter.module.css`) is that stylesheet.
 */
import { basename, join } from "node:path";
import { PROJECT_ROOT } from "./project_copy.ts";

export interface CodeBlock {
  /** The Markdown file, from the project root (`docs/actions.md`). */
  doc: string;
  /** The line of the doc where the block's code starts (1-based). */
  line: number;
  lang: string;
  code: string;
  /** Where the block lives in the project: the path it names, or a scratch file at the root. */
  path: string;
}

/** Languages that are TypeScript, and the extension their files get. */
const TYPESCRIPT: Record<string, string> = { ts: "ts", typescript: "ts", tsx: "tsx" };
const PLACED = /^\/\/ ((?:[\w$@()[\].-]+\/)*[\w$@()[\].-]+\.tsx?)$/;
const PLACED_CSS = /^\/\* ((?:[\w$@()[\].-]+\/)*[\w$@()[\].-]+\.css) \*\/$/;

/** README.md and every docs/*.md, from the project root. */
export async function docFiles(): Promise<string[]> {
  const docs = [];
  for await (const entry of Deno.readDir(join(PROJECT_ROOT, "docs"))) {
    if (entry.isFile && entry.name.endsWith(".md")) docs.push(`docs/${entry.name}`);
  }
  return ["README.md", ...docs.sort()];
}

/** Every fenced block of `text` (the doc `doc`), indented ones (in a list) included. */
export function fencedBlocks(doc: string, text: string): CodeBlock[] {
  const lines = text.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(\S*)/.exec(lines[i]);
    if (!open) continue;
    const [, indent, lang] = open;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^ *```\s*$/.test(lines[end])) end++;
    const code = lines.slice(start, end).map((line) => line.slice(indent.length)).join("\n") + "\n";
    blocks.push({ doc, line: start + 1, lang, code, path: "" });
    i = end;
  }
  return blocks;
}

/** The TypeScript blocks of `text`, each with the path it lives at. */
export function typescriptBlocks(doc: string, text: string): CodeBlock[] {
  return fencedBlocks(doc, text).filter((block) => block.lang in TYPESCRIPT).map((block) => {
    const named = PLACED.exec(block.code.split("\n", 1)[0])?.[1];
    const scratch = `_doc_${basename(doc, ".md")}_${block.line}.${TYPESCRIPT[block.lang]}`;
    return { ...block, path: named && !named.split("/").includes("..") ? named : scratch };
  });
}

/** The CSS blocks of `text` that name the stylesheet they are, each with its path. */
export function stylesheetBlocks(doc: string, text: string): CodeBlock[] {
  return fencedBlocks(doc, text).filter((block) => block.lang === "css").flatMap((block) => {
    const named = PLACED_CSS.exec(block.code.split("\n", 1)[0])?.[1];
    return named && !named.split("/").includes("..") ? [{ ...block, path: named }] : [];
  });
}
