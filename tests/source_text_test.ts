/**
 * @module
 * The framework's sources stay Latin-1. V8 holds every loaded module's source for as long as the
 * process lives, and Deno hands it each TypeScript module transpiled with its source map inline
 * (the original source again, base64): one character beyond Latin-1 anywhere in a file, an em
 * dash in a comment, makes V8 store all of that at two bytes a character. Under load V8 grows its
 * heap to a multiple of what it holds, so lib/'s 162 such files cost the serving process about
 * 1 MB of heap after load and several MB at its peak (docs/performance.md, "Memory under load").
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { PROJECT_ROOT } from "./helpers/project_copy.ts";

const LIB = join(PROJECT_ROOT, "lib");

async function* files(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* files(path);
    else if (/\.(ts|tsx|js|mjs)$/.test(entry.name)) yield path;
  }
}

Deno.test("no lib/ module holds a character beyond Latin-1", async () => {
  const found: string[] = [];
  for await (const file of files(LIB)) {
    const lines = (await Deno.readTextFile(file)).split("\n");
    lines.forEach((line, i) => {
      const char = /[^\t-\xff]/u.exec(line)?.[0];
      if (char) {
        const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
        found.push(`${relative(PROJECT_ROOT, file)}:${i + 1}: ${code}`);
      }
    });
  }
  assert.deepEqual(
    found,
    [],
    "V8 keeps a module's whole source (and its inline source map) at two bytes a character once " +
      "it holds one character beyond Latin-1: write ASCII in comments (- for a dash, ... for an " +
      'ellipsis, -> for an arrow) and \\u escapes in strings ("\\u2014").',
  );
});
