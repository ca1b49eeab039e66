/**
 * @module
 * A throwaway copy of the project in a temp folder, for tests that add routes or islands (failing
 * routes, freshly added files, dev-mode edits) without touching the real tree. `node_modules` is
 * linked, not copied; `_build/` is left out so the copy builds its own, unless `withBuild` asks
 * for the project's (`deno task test` builds it first): a copy then starts as the project would.
 * (A copy that is only served, never edited, is built once and shared: `built_copy.ts`.)
 */
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/**
 * Everything at the top of the tree is copied — an app's modules may live in any folder
 * (`components/`) — but what is not the app's sources: git's, the build's output, packages (linked
 * instead) and the local KV store.
 */
const NOT_COPIED = new Set([".git", "_build", "node_modules", ".data"]);

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
  /**
   * Copy into the same folder run after run (named after this and the tree) when no other run
   * holds it, so that what caches by path is found again: `deno check` type-checks only what
   * changed since it last checked there. A fresh temp folder when another run holds it.
   */
  reuse?: string;
}

/** A folder held longer than this was left by a run that was killed. */
const HELD_MS = 10 * 60 * 1000;

export async function copyProject(
  { withBuild = false, from = PROJECT_ROOT, reuse }: CopyOptions = {},
): Promise<ProjectCopy> {
  const held = reuse === undefined ? undefined : await hold(reuse, from);
  const root = held ?? await Deno.makeTempDir({ prefix: "app-copy-" });
  const names = [...Deno.readDirSync(from)].map((entry) => entry.name)
    .filter((name) => !NOT_COPIED.has(name));
  if (withBuild) names.push("_build");
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
      if (held) await Deno.remove(`${held}.lock`);
    },
  };
}

/** The empty folder `name` stands for, held by this run (a lock beside it), if no other holds it. */
async function hold(name: string, from: string): Promise<string | undefined> {
  const tree = createHash("sha256").update(from).digest("hex").slice(0, 8);
  const root = join(tmpdir(), `app-copy-${name}-${tree}`);
  try {
    await Deno.mkdir(`${root}.lock`);
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    const since = (await Deno.stat(`${root}.lock`).catch(() => undefined))?.mtime?.getTime();
    // Left by a killed run: free for the next one.
    if (since !== undefined && Date.now() - since > HELD_MS) {
      await Deno.remove(`${root}.lock`).catch(() => {});
    }
    return undefined;
  }
  await Deno.remove(root, { recursive: true }).catch(() => {});
  await Deno.mkdir(root);
  return root;
}
