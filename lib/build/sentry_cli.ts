/**
 * @module
 * Sentry's own CLI (`npm:@sentry/cli`, its binary shipped as a per-platform npm package), for what
 * the build and the source map upload hand it: debug IDs injected into the browser chunks, and
 * the maps uploaded. Run as the binary itself, not through the package's Node wrapper: a tenth of
 * a second per build.
 */
import { getPath } from "@sentry/cli/js/helper.js";

interface CliResult {
  success: boolean;
  stdout: string;
  stderr: string;
}

/** Where the binary is: the package of this platform's. */
export const sentryCliPath: () => string = getPath;

/** Runs `sentry-cli …args`, its output collected. */
async function sentryCli(args: string[]): Promise<CliResult> {
  const { success, stdout, stderr } = await new Deno.Command(getPath(), { args }).output();
  const text = new TextDecoder();
  return { success, stdout: text.decode(stdout), stderr: text.decode(stderr) };
}

/**
 * Gives every script in `files` (relative to `dir`) and its source map a Sentry debug ID: a UUID
 * derived from the script's content, so an unchanged chunk keeps its ID as it keeps its name. The
 * script gets `//# debugId=…` and a first line that registers the ID for its URL in
 * `globalThis._sentryDebugIds`, where the browser SDK finds it for the frames of an error; the map
 * gets `debugId`. Sentry then resolves a stack by ID, whichever URL served the script.
 */
export async function injectDebugIds(dir: string, files: string[]): Promise<void> {
  // The maps too: given files, sentry-cli changes only those it is given.
  const paths = files.filter((file) => /\.js(\.map)?$/.test(file)).map((file) => `${dir}/${file}`);
  if (paths.length === 0) return;
  const { success, stdout, stderr } = await sentryCli(["sourcemaps", "inject", ...paths]);
  if (!success) throw new Error(`sentry-cli sourcemaps inject failed:\n${stdout}${stderr}`);
}
