/**
 * @module
 * Whether the project has modules its build has not seen. The manifest imports what the build
 * found under `routes/` and `islands/`; a file added since (a page, a `_middleware.ts` guard, an
 * `_error.tsx`) is in no manifest until the next build, and nothing else says so: its page answers
 * 404, its guard is silently absent - in a product's in-process tests, and under `deno serve
 * main.ts` after a pull without `deno task build`. So an app made from a manifest lists those two
 * folders once and warns of modules the build did not have. Where they cannot be listed (a file
 * system that cannot be read, folders `--allow-read` does not reach), nothing is said; nor is
 * anything about a module removed since, as importing it fails by itself.
 */
import { log } from "./log.ts";

const MODULE = /\.(tsx|ts|jsx|js|mts|mjs)$/;

/**
 * The modules among files below `routes/` and `islands/` (paths relative to each), from the root.
 */
export function sourceModules(routes: readonly string[], islands: readonly string[]): string[] {
  return [
    ...routes.filter((file) => MODULE.test(file)).map((file) => `routes/${file}`),
    ...islands.filter((file) => MODULE.test(file)).map((file) => `islands/${file}`),
  ].sort();
}

/** The modules under `root` that `built` has not got; undefined when they cannot be listed. */
export function modulesAddedSince(root: string, built: readonly string[]): string[] | undefined {
  const [routes, islands] = [`${root}/routes`, `${root}/islands`];
  let now: string[];
  try {
    // Asked first: at a terminal, reading a folder `--allow-read` leaves out prompts for it, and
    // the start would wait on the answer.
    if (!readable(routes) || !readable(islands)) return undefined;
    now = sourceModules(filesBelow(routes), filesBelow(islands));
  } catch {
    return undefined;
  }
  const had = new Set(built);
  return now.filter((file) => !had.has(file));
}

const warned = new Set<string>();

/** One `warn` line, once per process for a root and build, when the project has moved on. */
export function warnOfUnbuiltModules(root: string, buildId: string, built: readonly string[]) {
  const key = `${root}\n${buildId}`;
  if (warned.has(key)) return;
  const added = modulesAddedSince(root, built);
  if (!added?.length) return;
  warned.add(key);
  const shown = added.slice(0, 3).join(", ") +
    (added.length > 3 ? ` and ${added.length - 3} more` : "");
  log(
    "warn",
    `The build is older than the project: ${shown} came after it, and the app runs without them ` +
      "(a page answers 404, a _middleware.ts does not run). Run deno task build (deno task start " +
      "builds by itself).",
    { added },
  );
}

function readable(dir: string): boolean {
  return Deno.permissions.querySync({ name: "read", path: dir }).state === "granted";
}

/**
 * Files below `dir` (paths relative to it, `/`-separated), as the build lists them
 * (`build/files.ts`): symbolic links are not followed. Deno's own calls, not `node:fs`'s, which a
 * server serving pages never loads otherwise (`tests/process/server_memory_test.ts`).
 */
function filesBelow(dir: string): string[] {
  const files: string[] = [];
  const walk = (below: string) => {
    for (const entry of Deno.readDirSync(below ? `${dir}/${below}` : dir)) {
      const path = below ? `${below}/${entry.name}` : entry.name;
      if (entry.isDirectory) walk(path);
      else if (entry.isFile) files.push(path);
    }
  };
  try {
    walk("");
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return files;
}
