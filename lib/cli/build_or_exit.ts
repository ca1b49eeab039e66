/**
 * @module
 * Builds for the entry points (`deno task build`, `deno task start`, `deno task
 * sentry:sourcemaps`): a mistake in the project's files ends the process with exit code 1 and one
 * line per mistake, `Build failed: islands/Broken.tsx:3:24: Could not resolve "./nope.ts"`, and no
 * stack. esbuild is loaded only when there is something to build, and never by a server: it builds
 * in a process of its own (`buildApartOrExit`).
 */
import { BuildProblem } from "../build/problem.ts";
import { PROJECT_ROOT } from "./root.ts";

export async function buildOrExit(dev: boolean): Promise<void> {
  const [{ build }, esbuild] = await Promise.all([import("../build/mod.ts"), import("esbuild")]);
  try {
    await build({ root: PROJECT_ROOT, dev });
  } catch (error) {
    if (!(error instanceof BuildProblem)) throw error;
    for (const line of error.message.split("\n")) console.error(`Build failed: ${line}`);
    Deno.exit(1);
  } finally {
    await esbuild.stop();
  }
}

const BUILD = new URL("./build.ts", import.meta.url);

/**
 * The same build, for a server about to serve (`start.ts`), run as `deno task build` runs it: in a
 * child process, which exits with its failure (its lines on our stderr). V8 never unloads a module:
 * built in the server's own process, esbuild's API, Lightning CSS's and Tailwind's native modules
 * and the build's own modules would stay in its memory for as long as it serves: such a server
 * idled at 155 MB against 89 and peaked at 1.40× the bare server under load (`docs/performance.md`,
 * "where the memory under load goes").
 */
export async function buildApartOrExit(dev: boolean): Promise<void> {
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BUILD.pathname],
    cwd: PROJECT_ROOT,
    env: { NODE_ENV: dev ? "development" : "production" },
    stdin: "null",
  }).spawn().status;
  if (code !== 0) Deno.exit(code);
}
