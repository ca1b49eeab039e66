/**
 * @module
 * The app in a process of its own, for a test over real HTTP: `deno task start` (the launcher), or
 * `deno serve --parallel main.ts` with N workers. It listens on a free loopback port (port 0, read
 * back from its `Listening on` line; one chosen before the start when its settings name its origin), on a KV file of its own in a temporary folder unless the test
 * names one, and runs in a process group of its own, which stopping ends whole: no worker or child
 * server outlives the test, even when the first process was killed, nor the test run when that is
 * interrupted or killed (a watchdog ends the group then). Test-only.
 */
import { Arrivals } from "./arrivals.ts";
import { collectLines, jsonLine } from "./lines.ts";
import type { LogLine } from "./logs.ts";
import { watchGroup } from "./watchdog.ts";

/**
 * How to start the server.
 *
 * @example
 * ```ts
 * import type { ServerOptions } from "shell/testing";
 * const twoWorkers: ServerOptions = { parallel: 2, env: { LOG_REQUESTS: "1" } };
 * ```
 */
export interface ServerOptions {
  /** The project's folder (its `deno.json`); the current directory by default. */
  root?: string;
  /** Workers of `deno serve --parallel main.ts`; unset, the server is `deno task start`. */
  parallel?: number;
  /**
   * Settings added to the test's own environment (`SENTRY_DSN`, the product's). `KV_PATH` names a
   * store the test holds; by default the server gets a new file, `kvPath`, removed when it stops.
   * Settings that name the server's own address (`APP_ORIGIN`, which the page cache and the host
   * guard need) are a function of its origin: `(origin) => ({ APP_ORIGIN: origin })`. The port is
   * then chosen before the start, and another tried when something took it meanwhile.
   */
  env?: Record<string, string> | ((origin: string) => Record<string, string>);
  /** How long to wait for `Listening on` (a first start builds): 60 s by default. */
  listenMs?: number;
}

/**
 * A server started by `startServer`: `await using` stops it.
 *
 * @example
 * ```ts
 * import { type StartedServer, startServer } from "shell/testing";
 * await using server: StartedServer = await startServer();
 * const failed = server.logs().filter((line) => line.level === "error");
 * ```
 */
export interface StartedServer extends AsyncDisposable {
  /** Where it listens: `http://127.0.0.1:PORT`. */
  readonly origin: string;
  /** The first process's id, which is also its process group's. */
  readonly pid: number;
  /** Its KV store: open the same file in the test to share it (`new TestClient(origin, { kv })`). */
  readonly kvPath: string;
  /** Every line it wrote to stdout so far (each worker's prefixed with its name). */
  readonly stdout: readonly string[];
  /** Every line it wrote to stderr so far. */
  readonly stderr: readonly string[];
  /** The stdout lines that are JSON log lines, parsed, whichever worker wrote them. */
  logs(): LogLine[];
  /** The first log line `predicate` accepts, waiting for it up to `ms` (5 s by default). */
  waitForLog(predicate: (line: LogLine) => boolean, ms?: number): Promise<LogLine>;
  /**
   * SIGTERM to the whole process group, then SIGKILL to what is left of it after `graceMs` (10 s)
   * or once the first process has exited; resolves with the first process's exit code.
   */
  stop(graceMs?: number): Promise<number>;
}

const LISTENING = /Listening on (https?:\/\/\S+)/;
/** Lines of each stream an error quotes. */
const TAIL = 20;

/**
 * Starts the app in a process of its own and resolves once it listens. It rejects, quoting the
 * end of its stderr and stdout, if the process exits first (a setting that makes no sense, a build
 * that fails) or says nothing within `listenMs`; the process group is ended then.
 *
 * @param options Which server (`parallel` workers, or `deno task start`), where, and its settings.
 * @example
 * ```ts
 * // tests/process/home_test.ts
 * import assert from "node:assert/strict";
 * import { startServer } from "shell/testing";
 *
 * Deno.test("the home page, from two workers", async () => {
 *   await using server = await startServer({ parallel: 2, env: { APP_NAME: "Desk" } });
 *   const res = await fetch(`${server.origin}/`);
 *   assert.equal(res.status, 200);
 *   await res.body?.cancel();
 * });
 * ```
 */
export async function startServer(options: ServerOptions = {}): Promise<StartedServer> {
  const { env = {} } = options;
  if (typeof env !== "function") return await startOn(options, env, 0);
  for (let tries = 1;; tries++) {
    const port = freePort();
    try {
      return await startOn(options, env(`http://127.0.0.1:${port}`), port);
    } catch (error) {
      if (!(error instanceof PortTaken) || tries === PORT_TRIES) throw error;
    }
  }
}

/** How many ports a start whose settings name its origin tries, when each is taken meanwhile. */
const PORT_TRIES = 5;

/** The server exited before listening because something else bound its port after it was chosen. */
class PortTaken extends Error {}

function freePort(): number {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  return listener.addr.port;
}

async function startOn(
  options: ServerOptions,
  env: Record<string, string>,
  port: number,
): Promise<StartedServer> {
  const { listenMs = 60_000 } = options;
  const ownStore = env.KV_PATH === undefined
    ? await Deno.makeTempDir({ prefix: "shell-server-" })
    : undefined;
  const kvPath = ownStore ? `${ownStore}/kv.sqlite3` : env.KV_PATH!;
  let child: Deno.ChildProcess;
  try {
    child = spawnServer(options, env, port, kvPath);
  } catch (error) {
    // A root that is not there, say: the store made for the server goes with it.
    if (ownStore) await Deno.remove(ownStore, { recursive: true }).catch(() => {});
    throw error;
  }
  const signalGroup = (signal: Deno.Signal) => {
    try {
      Deno.kill(-child.pid, signal);
    } catch { /* none of the group is left */ }
  };
  // Ends the group and its store if the test process is gone before it stopped the server.
  let watchdog: AsyncDisposable;
  try {
    watchdog = watchGroup(child.pid, ownStore);
  } catch (error) {
    // No `sh` to run it: nothing else would end the group then.
    signalGroup("SIGKILL");
    await child.status;
    await Promise.all([child.stdout.cancel(), child.stderr.cancel()]);
    if (ownStore) await Deno.remove(ownStore, { recursive: true }).catch(() => {});
    throw error;
  }

  const stdout: string[] = [];
  const stderr: string[] = [];
  const arrivals = new Arrivals();
  let exited = false;
  child.status.then(() => {
    exited = true;
    arrivals.arrived();
  });
  // Ends once every process of the group has let go of the pipes.
  const arrived = () => arrivals.arrived();
  const read = Promise.all([
    collectLines(child.stdout, stdout, arrived),
    collectLines(child.stderr, stderr, arrived),
  ]);
  const output = () =>
    `stderr:\n${stderr.slice(-TAIL).join("\n")}\nstdout:\n${stdout.slice(-TAIL).join("\n")}`;

  let stopped: Promise<number> | undefined;
  const stop = (graceMs = 10_000) =>
    stopped ??= (async () => {
      signalGroup("SIGTERM");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise((resolve) => timer = setTimeout(resolve, graceMs));
      await Promise.race([child.status, grace]);
      clearTimeout(timer);
      signalGroup("SIGKILL");
      const { code } = await child.status;
      await read;
      await watchdog[Symbol.asyncDispose]();
      if (ownStore) await Deno.remove(ownStore, { recursive: true }).catch(() => {});
      return code;
    })();

  const said =
    () => (stdout.find((l) => LISTENING.test(l)) ?? stderr.find((l) => LISTENING.test(l)));
  let listening: string;
  try {
    listening = await arrivals.until(
      () => said() ?? (exited ? "" : undefined),
      listenMs,
      () => `the server did not say "Listening on" within ${listenMs} ms\n${output()}`,
    );
    if (!listening) {
      await read;
      listening = said() ?? "";
    }
    if (!listening) {
      const { code } = await child.status;
      const why = `the server exited with code ${code} before listening\n${output()}`;
      if (port !== 0 && /AddrInUse|address already in use/i.test(why)) throw new PortTaken(why);
      throw new Error(why);
    }
  } catch (error) {
    await stop(0);
    throw error;
  }

  const logs = () => stdout.flatMap(jsonLine);
  return {
    origin: new URL(listening.match(LISTENING)![1]).origin,
    pid: child.pid,
    kvPath,
    stdout,
    stderr,
    logs,
    waitForLog: (predicate, ms = 5_000) =>
      arrivals.until(
        () => logs().find(predicate),
        ms,
        () => `no matching log line in ${ms} ms\n${output()}`,
      ),
    stop,
    async [Symbol.asyncDispose]() {
      await stop();
    },
  };
}

/** The server's process, in a process group of its own. */
function spawnServer(
  options: ServerOptions,
  env: Record<string, string>,
  port: number,
  kvPath: string,
): Deno.ChildProcess {
  const { root = Deno.cwd(), parallel } = options;
  return new Deno.Command(Deno.execPath(), {
    args: parallel === undefined
      ? ["task", "start"]
      : ["serve", "-A", "--parallel", "--host", "127.0.0.1", "--port", String(port), "main.ts"],
    cwd: root,
    env: {
      NODE_ENV: "production",
      ...(parallel === undefined ? {} : { DENO_JOBS: String(parallel) }),
      ...env,
      KV_PATH: kvPath,
      PORT: String(port),
      HOSTNAME: "127.0.0.1",
    },
    stdout: "piped",
    stderr: "piped",
    // A process group of its own (setsid), so a stop reaches every process the server started.
    detached: true,
  }).spawn();
}
