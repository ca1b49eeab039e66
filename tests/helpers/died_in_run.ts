/**
 * @module
 * A process that dies in a job's run: `deno eval` of `code` (which prints "running" once its run
 * began) on the store at `path` (its `KV` variable), killed with SIGKILL as soon as it says so (once
 * `meanwhile` is done, if given), its lease or turn taken and never given back. What the next process on the file does is the test's.
 */
import { within } from "./wait.ts";

/** The imports of `defineJobs` and `listenJobs`, for `code` to begin with. */
export const JOBS_IMPORTS = `import { defineJobs } from "${
  new URL("../../lib/kv/jobs/define.ts", import.meta.url).href
}";
  import { listenJobs } from "${new URL("../../lib/kv/jobs/listen.ts", import.meta.url).href}";`;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** `meanwhile`: what the test does once the run began, before the kill (default: nothing). */
export async function diedInRun(
  path: string,
  code: string,
  meanwhile?: () => Promise<void>,
): Promise<void> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", CONFIG, "--ext=ts", code],
    env: { KV: path, NODE_ENV: "production" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const running = async () => {
    while (!text.includes("running")) {
      const read = await lines.read();
      if (read.done) throw new Error(`the first process ended before its run: ${text}`);
      text += read.value;
    }
  };
  try {
    await within(running(), 30_000, "the first process's run");
    await meanwhile?.();
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // It ended on its own (the error above says how).
    }
    await child.status;
    await lines.cancel();
  }
}
