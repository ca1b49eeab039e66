/**
 * @module
 * Watches folders and reports each burst of changes once it has settled, so that an editor's
 * save (often several events: temp file, rename, write) triggers one rebuild. Reported are the
 * files that exist and changed, and those that existed and are gone; a temporary file that came
 * and went within the burst (`sed -i`'s, an editor's) is not.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";

/** Settling time: events closer together than this count as one change. */
const QUIET_MS = 30;

/** Calls `onChange` with the changed files after each burst of events under `paths`. */
export function watch(paths: string[], onChange: (files: string[]) => void): Disposable {
  const folders = paths.filter((path) => isFile(path) === false);
  const known = new Set(folders.flatMap(filesBelow));
  const watcher = Deno.watchFs(folders);
  const changed = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const settle = () => {
    const files = [...changed].filter((path) => {
      const file = isFile(path);
      if (file) known.add(path);
      return file ?? known.delete(path);
    });
    changed.clear();
    if (files.length > 0) onChange(files);
  };
  (async () => {
    for await (const event of watcher) {
      if (event.kind === "access") continue;
      for (const path of event.paths) if (!isEditorFile(path)) changed.add(path);
      if (changed.size === 0) continue;
      clearTimeout(timer);
      timer = setTimeout(settle, QUIET_MS);
    }
  })();
  return {
    [Symbol.dispose]() {
      clearTimeout(timer);
      watcher.close();
    },
  };
}

/** Swap, backup and lock files editors write next to the real one (`.x.swp`, `x~`, `.#x`). */
function isEditorFile(path: string): boolean {
  const name = basename(path);
  return name.startsWith(".") || name.endsWith("~");
}

/** True for a file, false for a folder, undefined for nothing there. */
function isFile(path: string): boolean | undefined {
  try {
    return statSync(path).isFile();
  } catch {
    return undefined;
  }
}

function filesBelow(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}
