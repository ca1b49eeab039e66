/**
 * @module
 * Watches the project and reports each burst of changes once it has settled, so that an editor's
 * save (often several events: temp file, rename, write) triggers one rebuild. Reported are the
 * files that exist and changed, and those that existed and are gone; a temporary file that came
 * and went within the burst (`sed -i`'s, an editor's) is not.
 *
 * The whole project is watched but what is never a source (`ignored`: the build's output,
 * `node_modules` - tens of thousands of folders - the KV store, git's): its top-level files, and
 * each top-level folder, recursively. A folder created later (`components/`) is watched from then
 * on, its files reported as new; one removed reports its files gone. What a change means is the
 * caller's to decide: the watcher knows nothing of module graphs.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** Settling time: events closer together than this count as one change. */
const QUIET_MS = 30;

/** Calls `onChange` with the changed files (absolute paths) after each burst of events. */
export function watchProject(
  project: string,
  ignored: Set<string>,
  onChange: (files: string[]) => void,
): Disposable {
  const root = resolve(project); // no trailing separator: compared with `dirname`'s
  const isWatchedFolder = (path: string) =>
    dirname(path) === root && !ignored.has(basename(path)) && !isEditorFile(path) &&
    isFile(path) === false;
  let folders = readdirSync(root).map((name) => join(root, name)).filter(isWatchedFolder);
  const known = new Set([...folders.flatMap(filesBelow), ...topFiles(root)]);
  const changed = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const settle = () => {
    const files = [...changed].filter((path) => {
      const file = isFile(path);
      if (file) known.add(path);
      return file ?? known.delete(path);
    });
    changed.clear();
    if (files.length > 0) onChange(files);
  };
  const note = (paths: string[]) => {
    for (const path of paths) if (!isEditorFile(path)) changed.add(path);
    if (changed.size === 0) return;
    clearTimeout(timer);
    timer = setTimeout(settle, QUIET_MS);
  };

  let tree: Deno.FsWatcher | undefined;
  const watchTree = () => {
    tree?.close();
    tree = folders.length > 0 ? Deno.watchFs(folders, { recursive: true }) : undefined;
    if (tree) listen(tree, (event) => note(event.paths));
  };
  const top = Deno.watchFs(root, { recursive: false });
  listen(top, (event) => {
    const added = event.paths.filter((path) => !folders.includes(path) && isWatchedFolder(path));
    const removed = folders.filter((folder) => isFile(folder) !== false);
    if (added.length > 0 || removed.length > 0) {
      folders = [...folders.filter((folder) => !removed.includes(folder)), ...added];
      watchTree();
      note(added.flatMap(filesBelow));
      note([...known].filter((file) => removed.some((folder) => file.startsWith(`${folder}/`))));
    }
    note(event.paths.filter((path) => dirname(path) === root && isFile(path) !== false));
  });
  watchTree();

  function listen(watcher: Deno.FsWatcher, handle: (event: Deno.FsEvent) => void) {
    (async () => {
      for await (const event of watcher) if (event.kind !== "access" && !closed) handle(event);
    })().catch((error) => {
      // A watched folder removed under the watcher may end it: the root's event rebuilds the tree.
      if (!closed && !(error instanceof Deno.errors.NotFound)) {
        console.error("dev: file watching failed:", error);
      }
    });
  }

  return {
    [Symbol.dispose]() {
      closed = true;
      clearTimeout(timer);
      top.close();
      tree?.close();
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

function topFiles(root: string): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(root, entry.name));
}

function filesBelow(folder: string): string[] {
  try {
    return readdirSync(folder, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name));
  } catch {
    return []; // gone already
  }
}
