/**
 * @module
 * A throwaway copy of an app in a temp folder, for tests that add routes or islands (failing
 * routes, freshly added files, dev-mode edits) without touching a real tree. By default the app is
 * the framework's own test app: the framework's files from the project root (`FRAMEWORK`) with
 * what is at the top of `tests/fixture/` (`FIXTURE_ROOT`) — never the example app, which a team
 * replaces. `from` copies another project tree as it is (a worktree of an older commit, a built
 * copy). `node_modules` is linked, not copied; `_build/` is left out so the copy builds its own,
 * unless `withBuild` asks for the tree's. (A copy that is only served, never edited, is built once
 * and shared: `built_copy.ts`.)
 *
 * What a copy is made of is listed here only (`copySources`): `built_copy.ts` hashes the same list.
 */
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The framework's test app: routes, islands, components and static files of its own. */
export const FIXTURE_ROOT = join(PROJECT_ROOT, "tests/fixture");

/**
 * Not a tree's sources: git's, the build's output, packages (linked instead), the local KV store,
 * and the fixture's notes on itself.
 */
const NOT_COPIED = new Set([".git", "_build", "node_modules", ".data", "README.md"]);
/** The framework and what runs it, taken from the project root for a copy of the test app. */
const FRAMEWORK = ["deno.json", "deno.lock", "main.ts", "lib"];

/** One entry of a copy: `name` at the copy's top, from `source`. */
export interface CopySource {
  name: string;
  source: string;
}

/**
 * What a copy is made of: the framework's files from the project root and every entry at the top
 * of the test app (an app's modules may live in any folder: `components/`); or, with `from`, every
 * entry at the top of that tree. Never what `NOT_COPIED` names.
 */
export function copySources(from?: string): CopySource[] {
  if (from) return entriesOf(from);
  return [
    ...FRAMEWORK.map((name) => ({ name, source: join(PROJECT_ROOT, name) })),
    ...entriesOf(FIXTURE_ROOT),
  ];
}

function entriesOf(tree: string): CopySource[] {
  return [...Deno.readDirSync(tree)].map((entry) => entry.name)
    .filter((name) => !NOT_COPIED.has(name)).sort()
    .map((name) => ({ name, source: join(tree, name) }));
}

export interface ProjectCopy extends AsyncDisposable {
  root: string;
  /** Writes `contents` to `path` (relative to the copy's root), creating folders. */
  write(path: string, contents: string | Uint8Array): Promise<void>;
}

export interface CopyOptions {
  /** Copy the tree's build too (only with `from`: the fixture has none of its own). */
  withBuild?: boolean;
  /** A project tree to copy as it is, in place of the framework with its test app. */
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
  { withBuild = false, from, reuse }: CopyOptions = {},
): Promise<ProjectCopy> {
  if (withBuild && !from) throw new Error("withBuild copies a built tree: name it with `from`");
  const held = reuse === undefined ? undefined : await hold(reuse, from ?? FIXTURE_ROOT);
  const root = held ?? await Deno.makeTempDir({ prefix: "app-copy-" });
  const sources = copySources(from);
  if (withBuild) sources.push({ name: "_build", source: join(from!, "_build") });
  await Promise.all(sources.map(async ({ name, source }) => {
    const info = await Deno.stat(source).catch(() => undefined);
    if (!info) return;
    const cp = new Deno.Command("cp", { args: ["-R", source, join(root, name)] });
    const { success } = await cp.output();
    if (!success) throw new Error(`could not copy ${name}`);
  }));
  await Deno.symlink(await packagesOf(from ?? PROJECT_ROOT), join(root, "node_modules"));
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

/**
 * Where `tree`'s packages really are. A copy links there rather than to `tree`'s own link: the
 * tree may be a copy that goes (a clean clone's `.ci/run`), while a built copy is kept for later
 * runs, and Deno fails to start over a dangling `node_modules` ("failed to create directory").
 */
export async function packagesOf(tree: string): Promise<string> {
  const packages = join(tree, "node_modules");
  return await Deno.realPath(packages).catch(() => packages);
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
