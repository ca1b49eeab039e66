/**
 * @module
 * Builds for the entry points (`deno task build`, `deno task start`, `deno task sentry:sourcemaps`):
 * a mistake in the project's files ends the process with exit code 1 and one line per mistake,
 * `Build failed: islands/Counter.tsx:3:24: Could not resolve "./nope.ts"`, and no stack.
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
    for (const line of error.message.split("\n")) console.error(`Build failed: ${line}`);
    Deno.exit(1);
  } finally {
    await esbuild.stop();
  }
}
