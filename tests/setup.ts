/**
 * @module
 * What the tests need besides Deno, made sure of before `deno test` starts: `deno task test` runs
 * `deno run -A tests/setup.ts`, `deno task test:e2e` and `test:load` name their folder. Each tool
 * is found, or installed with apt-get when this runs as root or with passwordless sudo, or the run
 * stops at once with one line naming what is missing and the command that gets it. No test skips
 * itself for want of a tool: the tools are here, or nothing runs.
 */
import { delimiter, join } from "node:path";

export interface Tool {
  /** What the message calls it. */
  name: string;
  /** The Debian/Ubuntu package that has it. */
  apt: string;
  /** Where it is, or undefined. */
  find(env: Env): string | undefined;
  /** Set when no package can help (a path the user chose is wrong): what to do instead. */
  broken?(env: Env): string | undefined;
}

export type Env = (name: string) => string | undefined;

/** Chromium for playwright-core: `CHROMIUM_PATH`, else Debian's. */
export function chromiumPath(env: Env = (name) => Deno.env.get(name)): string {
  return env("CHROMIUM_PATH") || "/usr/bin/chromium";
}

const CHROMIUM: Tool = {
  name: "chromium",
  apt: "chromium",
  find: (env) => isExecutable(chromiumPath(env)) ? chromiumPath(env) : undefined,
  broken: (env) =>
    env("CHROMIUM_PATH") && !isExecutable(chromiumPath(env))
      ? `CHROMIUM_PATH=${env("CHROMIUM_PATH")} is not an executable file: point it at Chromium ` +
        "or unset it to use /usr/bin/chromium"
      : undefined,
};

const onPath = (name: string, apt: string): Tool => ({
  name,
  apt,
  find: (env) =>
    (env("PATH") ?? "").split(delimiter).map((dir) => join(dir, name)).find(isExecutable),
});

const SQLITE3 = onPath("sqlite3", "sqlite3");
const SETPRIV = onPath("setpriv", "util-linux");

/**
 * What each kind of folder of tests runs besides Deno, by its name, at any depth under `tests/`: a
 * product's `tests/clinic/e2e/` needs Chromium as `tests/e2e/` does.
 */
export const NEEDS: Record<string, Tool[]> = {
  // Playwright drives it.
  e2e: [CHROMIUM],
  // load_test.ts: wrk; csp_test.ts, hostile_test.ts: Chromium; findings_serve_loop_test.ts: prlimit.
  reliability: [CHROMIUM, onPath("wrk", "wrk"), onPath("prlimit", "util-linux")],
  // Tests that start processes; KV tests hold SQLite's lock with sqlite3; as root, a read-only
  // file is opened as nobody.
  process: [SQLITE3, SETPRIV],
};

/** How deep below a named folder `kindsIn` looks for folders of tests: bounded, whatever is there. */
const DEPTH = 6;

/**
 * The kinds of folders a path holds tests of: the kinds named on the way to it below `tests/`
 * (`tests/clinic/e2e/booking_test.ts`: e2e), and those of the folders in it below a `tests/`
 * (`tests/clinic/`, with `e2e/` and `process/`: both, as `deno test tests/clinic/` runs them). A
 * folder elsewhere with such a name (`lib/process/`, `docs/e2e/`) holds no tests of that kind.
 */
export function kindsIn(path: string): Set<string> {
  const parts = path.split(/[\\/]+/).filter(Boolean);
  const below = parts.lastIndexOf("tests");
  const kinds = new Set(below < 0 ? [] : parts.slice(below + 1).filter((part) => part in NEEDS));
  const walk = (dir: string, inTests: boolean, depth: number) => {
    if (depth > DEPTH) return;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      return; // a file, or nothing there
    }
    for (const entry of entries) {
      if (!entry.isDirectory || entry.name === "node_modules" || entry.name.startsWith(".")) {
        continue;
      }
      if (inTests && entry.name in NEEDS) kinds.add(entry.name);
      walk(join(dir, entry.name), inTests || entry.name === "tests", depth + 1);
    }
  };
  walk(path, below >= 0, 1);
  return kinds;
}

/** The tools `folders` need (every kind's when none is named) that are not there. */
export function missingTools(folders: string[], env: Env): Tool[] {
  const named = new Set(folders.flatMap((folder) => [...kindsIn(folder)]));
  const kinds = Object.keys(NEEDS).filter((kind) => folders.length === 0 || named.has(kind));
  const tools = new Set(kinds.flatMap((kind) => NEEDS[kind]));
  return [...tools].filter((tool) => !tool.find(env));
}

/** The one line for tools that could not be had, with the command that gets them. */
export function missingMessage(tools: Tool[], env: Env, hasApt: boolean): string {
  const broken = tools.map((tool) => tool.broken?.(env)).find(Boolean);
  if (broken) return `tests/setup.ts: ${broken}`;
  const names = tools.map((tool) => tool.name).join(", ");
  const sudo = Deno.uid() === 0 ? "" : "sudo ";
  const install = `${sudo}apt-get install -y ${packagesOf(tools).join(" ")}`;
  return hasApt
    ? `tests/setup.ts: missing ${names}; install with: ${install}`
    : `tests/setup.ts: missing ${names}; install them with your package manager ` +
      `(Debian/Ubuntu: ${install}), or set CHROMIUM_PATH to a Chromium executable`;
}

function packagesOf(tools: Tool[]): string[] {
  return [...new Set(tools.map((tool) => tool.apt))];
}

function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

async function succeeds(command: string, args: string[]): Promise<boolean> {
  try {
    const child = new Deno.Command(command, {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    });
    return (await child.output()).success;
  } catch {
    return false;
  }
}

/** `apt-get …` as root: directly, through passwordless sudo, or not at all (undefined). */
async function rootRunner(): Promise<string[] | undefined> {
  if (Deno.uid() === 0) return [];
  if (await succeeds("sudo", ["-n", "true"])) return ["sudo", "-n"];
  return undefined;
}

async function aptGet(prefix: string[], args: string[]): Promise<boolean> {
  // Through `env`: sudo would drop the variable.
  const line = [...prefix, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", ...args];
  const child = new Deno.Command(line[0], {
    args: line.slice(1),
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  return (await child.status).success;
}

if (import.meta.main) {
  const env: Env = (name) => Deno.env.get(name);
  const missing = missingTools(Deno.args, env);
  if (missing.length > 0) {
    const hasApt = !!onPath("apt-get", "apt").find(env);
    const root = hasApt ? await rootRunner() : undefined;
    if (missing.some((tool) => tool.broken?.(env)) || !root) {
      console.error(missingMessage(missing, env, hasApt));
      Deno.exit(1);
    }
    const packages = packagesOf(missing);
    console.error(`tests/setup.ts: installing ${packages.join(" ")} with apt-get`);
    const installed = await aptGet(root, ["update", "-q"]) &&
      await aptGet(root, ["install", "-y", "-q", "--no-install-recommends", ...packages]);
    const still = missingTools(Deno.args, env);
    if (!installed || still.length > 0) {
      console.error(missingMessage(still.length > 0 ? still : missing, env, hasApt));
      Deno.exit(1);
    }
  }
}
