/**
 * @module
 * What the server's bundle (`_build/server/`, `server_bundle.ts`) was when its build ended, and
 * whether it still is: `deno task start` loads it as it finds it, so a bundle changed since - a
 * chunk deleted (a deploy's clean-up, another build's `keepRecent`), a file cut short or replaced
 * (a copy that failed half-way), a source map of another build - made a start that failed with a
 * `SyntaxError`, or a server that answered 500 at the first request needing a lazy chunk, or
 * stacks and digests pointing at the wrong lines. The build records each of its files' size and
 * hash in the fingerprint; the start's check (`fingerprint.ts`, in a process of its own) takes a
 * bundle that differs for a stale build, and rebuilds. A size is compared before the file is read:
 * a file grown to hundreds of megabytes costs a `stat`.
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** One line a file: `<sha-256 hex> <size> <name>`, the names sorted. */
export function bundleRecord(dir: string, files: string[]): string {
  return files.toSorted().map((file) => {
    const bytes = readFileSync(join(dir, file));
    return `${hashOf(bytes)} ${bytes.length} ${file}`;
  }).join("\n");
}

/** Whether every file `record` lists is still in `dir` with its size and content. */
export function bundleIntact(dir: string, record: string): boolean {
  for (const line of record.split("\n")) {
    const match = /^([0-9a-f]{64}) (\d+) (.+)$/.exec(line);
    if (!match) return false;
    const [, hash, size, file] = match;
    const path = join(dir, file);
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info?.isFile() || info.size !== Number(size)) return false;
    if (hashOf(readFileSync(path)) !== hash) return false;
  }
  return true;
}

function hashOf(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
