/**
 * @module
 * A copy of the framework's test app (or of another tree, `from`) with files added, built as
 * `deno task build` builds, and shared read-only by every test that asks for the same: the first
 * test file to ask builds it (under a lock), the others wait for it, and a later run with the same
 * sources finds it built. Its folder is named after a hash of everything it is made from — every
 * file `copyProject` copies (`copySources`), the files added and what `finish` does — so a change
 * to any of them makes a new one. Not after where the tree is: a copy of the project elsewhere
 * with the same sources (each `.ci/run` of tests/process/clean_start_test.ts) finds the copies the
 * run before it built, rather than building all fifty again. The packages it links to are part of
 * the name too: two clones at once (a local `.ci/run` and CI's) each get copies whose
 * `node_modules` is theirs, and never one that dangles once the other clone is removed. A server
 * started in it finds its build fresh and does not rebuild.
 *
 * `builtFixture()` is the test app itself, built: what servers and in-process apps run by default.
 * For tests that only serve a copy. One that edits its copy, or builds it itself, makes its own
 * with `copyProject()`.
 */
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { filesBelow } from "../../lib/build/files.ts";
import { withEntries } from "../../lib/build/styles/deno_json.ts";
import { copyProject, copySources, packagesOf, PROJECT_ROOT } from "./project_copy.ts";

export interface BuiltCopyOptions {
  /** The tree to copy: this project unless a test targets another (a worktree of an older commit). */
  from?: string;
  /** Runs on the built copy before it is shared, e.g. to lose a chunk as a deploy would. */
  finish?: (root: string) => Promise<void>;
}

/** How long one test file may take to build a copy before the others stop waiting for it. */
const BUILD_MS = 180_000;
/** Copies of the same name from other sources are removed once unused for this long. */
const STALE_MS = 60 * 60 * 1000;

/** The framework's test app (`tests/fixture/`), built. */
export function builtFixture(): Promise<string> {
  return builtCopy("fixture", {});
}

/**
 * The root of the built copy of the test app (or of `from`) with `files` (path → contents) added.
 * `name` says what it is for; it is part of the folder's name.
 */
export async function builtCopy(
  name: string,
  files: Record<string, string | Uint8Array>,
  { from, finish }: BuiltCopyOptions = {},
): Promise<string> {
  const hash = createHash("sha256").update(`${name}\n${finish ?? ""}\n`)
    .update(`node_modules -> ${await packagesOf(from ?? PROJECT_ROOT)}\n`);
  for (const { name, source } of copySources(from)) {
    const info = await Deno.stat(source).catch(() => undefined);
    if (!info) continue;
    const files = info.isDirectory ? await filesBelow(source) : [""];
    for (const file of files) {
      const path = join(name, file);
      hash.update(`${path}\n`).update(await sourceOf(path, join(source, file)));
    }
  }
  for (const [path, contents] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    hash.update(`\n${path}\n`).update(contents);
  }
  // One family of folders per name: a new one replaces the old ones of its family.
  const family = `app-built-${name}-`;
  const root = join(tmpdir(), family + hash.digest("hex").slice(0, 16));
  const ready = join(root, ".ready");
  const lock = `${root}.lock`;
  const started = Date.now();
  while (!(await exists(ready))) {
    if (Date.now() - started > 2 * BUILD_MS) {
      throw new Error(`the copy in ${root} was not built in time`);
    }
    try {
      await Deno.mkdir(lock);
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      // Another test file builds; a lock older than any build is a run killed while building.
      const since = (await Deno.stat(lock).catch(() => undefined))?.mtime?.getTime();
      if (since !== undefined && Date.now() - since > BUILD_MS) {
        await Deno.remove(lock).catch(() => {});
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    try {
      if (!(await exists(ready))) await build(root, from, files, finish);
    } finally {
      await Deno.remove(lock);
    }
    await removeStale(family, root);
  }
  // In use: another tree's run, building another copy of this family, leaves it in place.
  const now = new Date();
  await Deno.utime(ready, now, now);
  return root;
}

async function build(
  root: string,
  from: string | undefined,
  files: Record<string, string | Uint8Array>,
  finish: BuiltCopyOptions["finish"],
): Promise<void> {
  await Deno.remove(root, { recursive: true }).catch(() => {});
  const copy = await copyProject({ from });
  try {
    for (const [path, contents] of Object.entries(files)) await copy.write(path, contents);
    // The task, not a script of ours: a tree of an older commit builds as it did then.
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["task", "build"],
      cwd: copy.root,
      env: { NODE_ENV: "production" },
      stdout: "null",
      stderr: "piped",
    }).output();
    if (code !== 0) {
      throw new Error(`the build of ${root} failed:\n${new TextDecoder().decode(stderr)}`);
    }
    await finish?.(copy.root);
    await Deno.rename(copy.root, root);
  } catch (error) {
    await copy[Symbol.asyncDispose]();
    throw error;
  }
  await Deno.writeTextFile(join(root, ".ready"), "");
}

/**
 * What a copied file adds to the hash: its bytes, but for `deno.json` the entries the build owns
 * (its stylesheets') left out, as the build writes the copy's own. A project whose example was
 * removed, its stylesheets' entries with it (clean_start_test's clean start), makes the same copy.
 */
async function sourceOf(path: string, file: string): Promise<string | Uint8Array> {
  if (path !== "deno.json") return await Deno.readFile(file);
  return withEntries(await Deno.readTextFile(file), new Map());
}

/** Removes the other copies of `family` that nobody has built or used for a while. */
async function removeStale(family: string, keep: string): Promise<void> {
  for await (const entry of Deno.readDir(tmpdir())) {
    const path = join(tmpdir(), entry.name);
    // Its family's name and a hash, not another family's whose name goes on (`page-cache-lease`).
    const ours = entry.name.startsWith(family) &&
      /^[0-9a-f]{16}$/.test(entry.name.slice(family.length));
    if (!entry.isDirectory || !ours || path === keep) continue;
    const built = (await Deno.stat(join(path, ".ready")).catch(() => undefined))?.mtime;
    if (built && Date.now() - built.getTime() > STALE_MS) {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    }
  }
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

// `deno task test` builds the test app before the tests start, so that none waits on another for
// it (and `test:unit`, which may start no process, finds it built).
if (import.meta.main) await builtFixture();
