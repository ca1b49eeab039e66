/**
 * @module
 * Runs `wrk` (Debian's) against a URL and reads its `--latency` report: requests per second, the
 * 50th and 99th percentile latencies, socket errors and responses that were not 2xx or 3xx.
 */

export interface WrkOptions {
  seconds: number;
  connections: number;
  /** A Lua script for wrk (e.g. one that rotates paths). */
  script?: string;
  /** The CPU wrk runs on (`taskset`), to load a server pinned beside it. */
  cpu?: number;
  /** Headers every request carries (a session's `Cookie`). */
  headers?: Record<string, string>;
}

export interface WrkResult {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  socketErrors: number;
  non2xx3xx: number;
}

export async function wrk(url: string, options: WrkOptions): Promise<WrkResult> {
  const args = [
    "-t1",
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    "--timeout",
    "10s",
    "--latency",
    ...(options.script ? ["-s", options.script] : []),
    ...Object.entries(options.headers ?? {}).flatMap((
      [name, value],
    ) => ["-H", `${name}: ${value}`]),
    url,
  ];
  const command = options.cpu === undefined
    ? new Deno.Command("wrk", { args })
    : new Deno.Command("taskset", { args: ["-c", String(options.cpu), "wrk", ...args] });
  const { code, stdout, stderr } = await command.output();
  const text = new TextDecoder().decode(stdout);
  if (code !== 0) {
    throw new Error(`wrk ${args.join(" ")} failed:\n${text}${new TextDecoder().decode(stderr)}`);
  }
  return parseWrk(text);
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function latency(text: string, percentile: number): number {
  const match = new RegExp(`^\\s+${percentile}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m").exec(text);
  if (!match) throw new Error(`no ${percentile}% latency in wrk's report:\n${text}`);
  return Number(match[1]) * UNIT_MS[match[2]];
}

export function parseWrk(text: string): WrkResult {
  const number = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    requests: number(/^\s*(\d+) requests in/m),
    rps: number(/^Requests\/sec:\s+([\d.]+)/m),
    p50Ms: latency(text, 50),
    p99Ms: latency(text, 99),
    socketErrors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    non2xx3xx: number(/Non-2xx or 3xx responses: (\d+)/),
  };
}

/** A wrk script that sends GET to each path in turn. */
export async function rotatingScript(paths: string[]): Promise<string> {
  const file = await Deno.makeTempFile({ prefix: "wrk-", suffix: ".lua" });
  const list = paths.map((p) => JSON.stringify(p)).join(", ");
  await Deno.writeTextFile(
    file,
    `local paths = { ${list} }\nlocal i = 0\n` +
      `request = function()\n  i = i % #paths + 1\n  return wrk.format("GET", paths[i])\nend\n`,
  );
  return file;
}
