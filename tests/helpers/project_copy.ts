/**
 * @module
 * A throwaway copy of the project in a temp folder, for tests that add routes or islands (failing
 * routes, freshly added files, dev-mode edits) without touching the real tree. `node_modules` is
 * linked, not copied; `_build/` is left out so the copy builds its own, unless `withBuild` asks
 * for the project's (`deno task test` builds it first): a copy then starts as the project would.
 * (A copy that is only served, never edited, is built once and shared: `built_copy.ts`.)
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const COPIED = ["deno.json", "deno.lock", "main.ts", "lib", "routes", "islands", "static"];

export interface ProjectCopy extends AsyncDisposable {
  root: string;
  /** Writes `contents` to `path` (relative to the copy's root), creating folders. */
  write(path: string, contents: string | Uint8Array): Promise<void>;
}

export interface CopyOptions {
  /** Copy the project's build too. */
  withBuild?: boolean;
  /** The tree to copy: this project unless a test targets another (a worktree of an older commit). */
  from?: string;
}

export async function copyProject(
  { withBuild = false, from = PROJECT_ROOT }: CopyOptions = {},
): Promise<ProjectCopy> {
  const root = await Deno.makeTempDir({ prefix: "app-copy-" });
  const names = withBuild ? [...COPIED, "_build"] : COPIED;
  await Promise.all(names.map(async (name) => {
    const source = join(from, name);
    const info = await Deno.stat(source).catch(() => undefined);
    if (!info) return;
    const cp = new Deno.Command("cp", { args: ["-R", source, join(root, name)] });
    const { success } = await cp.output();
    if (!success) throw new Error(`could not copy ${name}`);
  }));
  await Deno.symlink(join(from, "node_modules"), join(root, "node_modules"));
  return {
    root,
    async write(path, contents) {
      const target = join(root, path);
      await Deno.mkdir(join(target, ".."), { recursive: true });
      if (typeof contents === "string") await Deno.writeTextFile(target, contents);
      else await Deno.writeFile(target, contents);
    },
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}
