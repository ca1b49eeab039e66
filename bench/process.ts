/**
 * @module
 * The processes a benchmark measures: a server started on a free loopback port with the given
 * `deno` arguments (`task start`, or `run -A bench/bare.ts`), waiting until it answers; its
 * resident memory; and how long a fresh one takes to its first 200.
 */

export interface Running extends AsyncDisposable {
  origin: string;
  /** The server's own process: under `deno task`, the task runner's child. */
  pid(): number;
  stop(): Promise<void>;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

interface Child {
  process: Deno.ChildProcess;
  /** The end of what it wrote to stderr (drained, so a chatty server never blocks on the pipe). */
  stderr(): string;
}

function spawn(root: string, args: string[], env: Record<string, string>, port: number): Child {
  const process = new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    env: { NODE_ENV: "production", ...env, PORT: String(port), HOSTNAME: "127.0.0.1" },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let tail = "";
  (async () => {
    for await (const text of process.stderr.pipeThrough(new TextDecoderStream())) {
      tail = (tail + text).slice(-4000);
    }
  })();
  return { process, stderr: () => tail };
}

async function kill(child: Child, signal: Deno.Signal): Promise<void> {
  try {
    child.process.kill(signal);
  } catch { /* already gone */ }
  await child.process.status;
}

/** Resolves once `url` answers 200; rejects after `ms`. */
async function until200(url: string, ms: number, child: Child): Promise<void> {
  const deadline = performance.now() + ms;
  let exited = false;
  child.process.status.then(() => exited = true);
  while (performance.now() < deadline && !exited) {
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch { /* not listening yet */ }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`${url} did not answer 200 within ${ms} ms\n${child.stderr()}`);
}

/**
 * `args`: `deno`'s arguments, or a function of the port for those that take it as a flag; `env`
 * likewise (`APP_ORIGIN` names the port).
 */
export async function start(
  root: string,
  args: string[] | ((port: number) => string[]),
  env: Record<string, string> | ((port: number) => Record<string, string>) = {},
  readyPath = "/",
): Promise<Running> {
  const port = freePort();
  if (typeof args === "function") args = args(port);
  const child = spawn(root, args, typeof env === "function" ? env(port) : env, port);
  const origin = `http://127.0.0.1:${port}`;
  try {
    await until200(origin + readyPath, 60_000, child);
  } catch (error) {
    await kill(child, "SIGKILL");
    throw error;
  }
  let stopped: Promise<void> | undefined;
  // SIGKILL if SIGTERM did not end it: Deno 2.9.6's `deno serve --parallel` can miss a SIGTERM.
  const stop = () =>
    stopped ??= (async () => {
      const late = setTimeout(() => kill(child, "SIGKILL"), 5_000);
      await kill(child, "SIGTERM");
      clearTimeout(late);
    })();
  const pid = () => args[0] === "task" ? serverOf(child.process.pid) : child.process.pid;
  return { origin, pid, stop, [Symbol.asyncDispose]: stop };
}

/** The `DENO_V8_FLAGS` that `deno task start` sets (deno.json), for the limit to run with too. */
export async function startV8Flags(root: string): Promise<string> {
  const { tasks } = JSON.parse(await Deno.readTextFile(`${root}/deno.json`));
  const command: string = tasks.start.command ?? tasks.start;
  const flags = /DENO_V8_FLAGS=(\S+)/.exec(command)?.[1];
  if (!flags) throw new Error("deno.json: the start task sets no DENO_V8_FLAGS");
  return flags;
}

/** Milliseconds from spawning `deno ...args` to its first 200 on `path`. */
export async function coldStart(
  root: string,
  args: string[],
  path = "/",
): Promise<number> {
  const port = freePort();
  const began = performance.now();
  const child = spawn(root, args, {}, port);
  try {
    await until200(`http://127.0.0.1:${port}${path}`, 30_000, child);
    return performance.now() - began;
  } finally {
    await kill(child, "SIGTERM");
  }
}

/** Moves every thread of a running process onto one CPU, or back onto all (`taskset`). */
export async function pin(pid: number, cpu: number | "all"): Promise<void> {
  const cpus = cpu === "all" ? `0-${navigator.hardwareConcurrency - 1}` : String(cpu);
  const args = ["-a", "-p", "-c", cpus, String(pid)];
  const { success, stderr } = await new Deno.Command("taskset", { args, stdout: "null" }).output();
  if (!success) throw new Error(`taskset ${args.join(" ")}: ${new TextDecoder().decode(stderr)}`);
}

/** Resident set size of a process, in MB (`VmRSS` in /proc/PID/status). */
export async function rssMb(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb[1]) / 1024;
}

/**
 * The server below the task runner: its child, or that child's child when the launcher runs the
 * server in a process of its own (see `lib/cli/launch.ts`).
 */
function serverOf(pid: number): number {
  const children = (of: number) =>
    Deno.readTextFileSync(`/proc/${of}/task/${of}/children`).trim().split(" ").filter(Boolean);
  const [child, ...more] = children(pid);
  if (!child || more.length) throw new Error(`process ${pid} has no single child`);
  const [server, ...others] = children(Number(child));
  return server && others.length === 0 ? Number(server) : Number(child);
}
