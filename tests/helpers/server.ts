/**
 * @module
 * Starts the real server on a free loopback port (`lib/cli/start.ts`, as `deno task start` does,
 * or `deno serve main.ts`) and collects what it prints, so tests can talk HTTP to it and read its
 * JSON log lines. It serves the framework's built test app (`builtFixture()`) unless the test names
 * another root. Its KV store is `:memory:` unless the test sets `KV_PATH`. A port is free only
 * until something binds it: when another process (a test run in parallel) takes the one chosen
 * before the server binds it, the server is started again on another, so tests that need the port
 * in their settings (`APP_ORIGIN`) give them as a function of it.
 */
import { Arrivals } from "../../lib/testing/arrivals.ts";
import { collectLines, jsonLine } from "../../lib/testing/lines.ts";
import { builtFixture } from "./built_copy.ts";

export interface TestServer {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  /** The process's id (its memory is in `/proc/<pid>/status`). */
  pid: number;
  /** Every line the server wrote to stdout so far. */
  stdout: string[];
  stderr: string[];
  /** stdout lines that parse as JSON objects. */
  logs(): Record<string, unknown>[];
  /** Resolves with the first JSON log line matching `predicate` (waits up to `ms`). */
  waitForLog(
    predicate: (line: Record<string, unknown>) => boolean,
    ms?: number,
  ): Promise<Record<string, unknown>>;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** SIGTERM, then wait for the exit; returns the exit code. */
  stop(): Promise<number>;
  /** SIGKILL, for a process that does not exit on SIGTERM (then `stop()` returns at once). */
  kill(): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A local port nothing listens on, for a service that is down: 2, a privileged port no test and no
 * service of this machine takes (and not one `fetch` refuses to try, as it does 1). A port found
 * free (`freePort()`) may be taken, while the test runs, by a server of another test or of another
 * run of the suite.
 */
export const CLOSED_PORT = 2;

export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

export interface StartOptions {
  /** Project root to run in (a `copyProject()` or `builtCopy()` root); the built test app by default. */
  root?: string;
  /** Script to run, relative to the root. */
  script?: string;
  /** Deno's arguments for the port, in place of `run -A {script}`: e.g. a `deno serve` line. */
  args?: (port: number) => string[];
  /**
   * A port to listen on (a restart where the last server was); a free one by default, another
   * one if the server finds it taken.
   */
  port?: number;
}

/** Settings, or settings that name the port (`APP_ORIGIN`), given the one the server is to take. */
export type ServerEnv = Record<string, string> | ((port: number) => Record<string, string>);

/** How many ports a start tries when each is taken before the server binds it. */
const PORT_TRIES = 5;

export async function startServer(
  env: ServerEnv = {},
  options: StartOptions = {},
): Promise<TestServer> {
  for (let tries = 1;; tries++) {
    const port = options.port ?? freePort();
    try {
      return await startOn(port, typeof env === "function" ? env(port) : env, options);
    } catch (error) {
      if (!(error instanceof PortTaken) || options.port !== undefined || tries === PORT_TRIES) {
        throw error;
      }
    }
  }
}

/** The server exited before listening, because something else had bound its port meanwhile. */
export class PortTaken extends Error {}

async function startOn(
  port: number,
  env: Record<string, string>,
  { root, script = "lib/cli/start.ts", args }: StartOptions,
): Promise<TestServer> {
  root ??= await builtFixture();
  const child = new Deno.Command(Deno.execPath(), {
    args: args?.(port) ?? ["run", "-A", script],
    cwd: root,
    // A store of its own unless the test names one: never the developer's `.data/`.
    env: {
      NODE_ENV: "production",
      KV_PATH: ":memory:",
      ...env,
      PORT: String(port),
      HOSTNAME: "127.0.0.1",
    },
    stdout: "piped",
    stderr: "piped",
  }).spawn();

  const stdout: string[] = [];
  const stderr: string[] = [];
  const arrivals = new Arrivals();
  const arrived = () => arrivals.arrived();
  const done = Promise.all([
    collectLines(child.stdout, stdout, arrived),
    collectLines(child.stderr, stderr, arrived),
  ]);
  const origin = `http://127.0.0.1:${port}`;

  // `deno serve --parallel` prefixes each worker's lines with its name (docs/failures.md).
  const logs = () => stdout.flatMap(jsonLine);

  const waitFor = <T>(find: () => T | undefined, ms: number, what: string): Promise<T> =>
    arrivals.until(
      find,
      ms,
      () =>
        `${what} not seen in ${ms} ms\nstdout:\n${stdout.join("\n")}\nstderr:\n${
          stderr.join("\n")
        }`,
    );

  // `deno serve` says it on stderr.
  const listening = (l: string) => l.includes("Listening on");
  let exited = false;
  child.status.then(() => {
    exited = true;
    arrivals.arrived();
  });
  const said = () => stdout.find(listening) ?? stderr.find(listening);
  await waitFor(() => said() ?? (exited ? "" : undefined), 30_000, "Listening");
  if (!said()) {
    await done;
    if (!said()) {
      const output = `stdout:\n${stdout.join("\n")}\nstderr:\n${stderr.join("\n")}`;
      if (/AddrInUse|address already in use/i.test(output)) throw new PortTaken(output);
      throw new Error(`the server exited before listening\n${output}`);
    }
  }

  let stopped: Promise<number> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const { code } = await child.status;
      await done;
      return code;
    })();

  return {
    origin,
    port,
    pid: child.pid,
    stdout,
    stderr,
    logs,
    waitForLog: (predicate, ms = 5_000) =>
      waitFor(() => logs().find(predicate), ms, "matching log line"),
    fetch: (path, init) => fetch(origin + path, { redirect: "manual", ...init }),
    stop,
    kill() {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    },
    async [Symbol.asyncDispose]() {
      await stop();
    },
  };
}
