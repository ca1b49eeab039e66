/**
 * @module
 * Builds for the entry points (`deno task build`, `deno task start`, `deno task sentry:sourcemaps`):
 * a mistake in the project's files ends the process with its one-line message and exit code 1.
 * esbuild is loaded only when there is something to build.
 */
import { BuildProblem } from "../build/problem.ts";
import { PROJECT_ROOT } from "./root.ts";

export async function buildOrExit(dev: boolean): Promise<void> {
  const [{ build }, esbuild] = await Promise.all([import("../build/mod.ts"), import("esbuild")]);
  try {
    await build({ root: PROJECT_ROOT, dev });
  } catch (error) {
    if (!(error instanceof BuildProblem)) throw error;
    console.error(`Build failed: ${error.message}`);
    Deno.exit(1);
  } finally {
    await esbuild.stop();
  }
}
