/**
 * @module
 * Watches folders and reports each burst of changes once it has settled, so that an editor's
 * save (often several events: temp file, rename, write) triggers a single rebuild.
 */
import { basename } from "node:path";

/** Settling time: events closer together than this count as one change. */
const QUIET_MS = 100;

/** Calls `onChange` with the changed paths after each burst of events under `paths`. */
export function watch(paths: string[], onChange: (paths: string[]) => void): Disposable {
  const watcher = Deno.watchFs(paths.filter(exists));
  const changed = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const settle = () => {
    const settled = [...changed];
    changed.clear();
    onChange(settled);
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

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
