/**
 * @module
 * The app's server as a child process (`lib/cli/start.ts`, as in production, with
 * `NODE_ENV=development`), so every restart loads a fresh module graph. It loads the framework,
 * then waits for `go` (`standby.ts`); it listens on a free loopback port, behind the dev server
 * (`forwarding.ts`), and says which in its "Listening on" line; the rest of its stdout goes
 * straight to ours. Its stderr is passed on too, and the end of it kept to show why it stopped.
 */

/** How long a graceful shutdown may take before the server is killed. */
const STOP_TIMEOUT_MS = 5_000;
/** How long the server may take to listen. */
const START_TIMEOUT_MS = 60_000;
/** How much of the end of stderr is kept. */
const TAIL_CHARS = 8_000;
const LISTENING = /^Listening on (http:\/\/\S+?)\/?$/;

export interface ServerProcess {
  /** Lets it load the app (the build is written) and listen. */
  go(): void;
  /** Resolves with the server's origin once it listens; rejects if it stops or hangs before. */
  listening: Promise<string>;
  stop(): Promise<void>;
}

export class StartFailure extends Error {
  constructor(readonly code: number | undefined, readonly stderr: string) {
    super(code === undefined ? "the server did not listen in time" : `exit code ${code}`);
  }
}

/** Starts the server; `onExit` hears of an exit after it listened that nobody asked for. */
export function spawnServer(
  root: string,
  token: string,
  onExit: (code: number, stderr: string) => void,
): ServerProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "lib/cli/start.ts"],
    cwd: root,
    env: { NODE_ENV: "development", HOSTNAME: "127.0.0.1", PORT: "0", DEV_FRONT_TOKEN: token },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();

  let tail = "";
  let listened: (origin: string) => void;
  let failed: (failure: StartFailure) => void;
  const listening = new Promise<string>((resolve, reject) => {
    listened = resolve;
    failed = reject;
  });
  listening.catch(() => {}); // the caller may be gone by then
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Held open while it runs: its end tells the server the dev server is gone.
  const stdin = child.stdin.getWriter();

  const forwarded = Promise.all([
    lines(child.stdout, (line) => {
      const origin = LISTENING.exec(line)?.[1];
      if (origin) {
        clearTimeout(timer);
        listened(origin);
      } else console.log(line);
    }),
    (async () => {
      const decoder = new TextDecoder();
      for await (const bytes of child.stderr) {
        await Deno.stderr.write(bytes);
        tail = (tail + decoder.decode(bytes, { stream: true })).slice(-TAIL_CHARS);
      }
    })(),
  ]);

  let stopping = false;
  child.status.then(async ({ code }) => {
    clearTimeout(timer);
    await forwarded;
    failed(new StartFailure(code, tail)); // no effect once it listened
    if (!stopping && (await listening.then(() => true, () => false))) onExit(code, tail);
  });

  return {
    go() {
      // A failed write: it has exited (see `listening`).
      stdin.write(new TextEncoder().encode("go\n")).catch(() => {});
      timer = setTimeout(() => {
        failed(new StartFailure(undefined, tail));
        kill("SIGKILL");
      }, START_TIMEOUT_MS);
    },
    listening,
    async stop() {
      stopping = true;
      const killer = setTimeout(() => kill("SIGKILL"), STOP_TIMEOUT_MS);
      kill("SIGTERM");
      await child.status;
      clearTimeout(killer);
      await forwarded;
      await stdin.close().catch(() => {});
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

async function lines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void) {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const bytes of stream) {
    const parts = (rest + decoder.decode(bytes, { stream: true })).split("\n");
    rest = parts.pop()!;
    parts.forEach(onLine);
  }
  if (rest) onLine(rest);
}
