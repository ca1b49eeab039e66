/**
 * @module
 * A throwaway copy of the project in a temp folder, for tests that add routes or islands (failing
 * routes, freshly added files, dev-mode edits) without touching the real tree. `node_modules` is
 * linked, not copied; `_build/` is left out so the copy builds its own, unless `withBuild` asks
 * for the project's (`deno task test` builds it first): a copy then starts as the project would.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const COPIED = ["deno.json", "deno.lock", "main.ts", "lib", "routes", "islands", "static"];

export interface ProjectCopy extends AsyncDisposable {
  root: string;
  /** Writes `contents` to `path` (relative to the copy's root), creating folders. */
  write(path: string, contents: string): Promise<void>;
}

export async function copyProject({ withBuild = false } = {}): Promise<ProjectCopy> {
  const root = await Deno.makeTempDir({ prefix: "app-copy-" });
  for (const name of withBuild ? [...COPIED, "_build"] : COPIED) {
    const from = join(PROJECT_ROOT, name);
    const info = await Deno.stat(from).catch(() => undefined);
    if (!info) continue;
    const cp = new Deno.Command("cp", { args: ["-R", from, join(root, name)] });
    const { success } = await cp.output();
    if (!success) throw new Error(`could not copy ${name}`);
  }
  await Deno.symlink(join(PROJECT_ROOT, "node_modules"), join(root, "node_modules"));
  return {
    root,
    async write(path, contents) {
      const target = join(root, path);
      await Deno.mkdir(join(target, ".."), { recursive: true });
      await Deno.writeTextFile(target, contents);
    },
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}
