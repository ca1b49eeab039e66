/**
 * @module
 * The app's server as a child process (`lib/cli/start.ts`, as in production, with
 * `NODE_ENV=development`), so every restart loads a fresh module graph. Its stdout goes straight
 * to ours; its stderr is passed on too, and the end of it is kept to show why it exited.
 */

/** How long a graceful shutdown may take before the server is killed. */
const STOP_TIMEOUT_MS = 5_000;
/** How much of the end of stderr is kept. */
const TAIL_CHARS = 8_000;

export interface ServerProcess {
  stop(): Promise<void>;
}

/** Starts the server; `onExit` hears of an exit it was not asked for (a crash, a failed start). */
export function spawnServer(
  root: string,
  onExit: (code: number, stderr: string) => void,
): ServerProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "lib/cli/start.ts"],
    cwd: root,
    env: { NODE_ENV: "development" },
    stdin: "null",
    stdout: "inherit",
    stderr: "piped",
  }).spawn();

  let tail = "";
  const forwarded = (async () => {
    const decoder = new TextDecoder();
    for await (const bytes of child.stderr) {
      await Deno.stderr.write(bytes);
      tail = (tail + decoder.decode(bytes, { stream: true })).slice(-TAIL_CHARS);
    }
  })();

  let stopping = false;
  child.status.then(async ({ code }) => {
    await forwarded;
    if (!stopping) onExit(code, tail);
  });

  return {
    async stop() {
      stopping = true;
      const timer = setTimeout(() => kill("SIGKILL"), STOP_TIMEOUT_MS);
      kill("SIGTERM");
      await child.status;
      clearTimeout(timer);
      await forwarded;
    },
  };

  function kill(signal: Deno.Signal) {
    try {
      child.kill(signal);
    } catch {
      // It has exited already.
    }
  }
}
