/**
 * @module
 * What a running server has loaded, over the inspector protocol (`--inspect`): the URLs of the
 * scripts V8 holds, and the modules they are made of, named by URL either way - a module from
 * source is its own script, a chunk of the server's bundle (`_build/server/`) stands for the
 * modules its linked source map lists.
 */
import { fileURLToPath } from "node:url";

/**
 * The arguments that start a process's inspector on a port of the system's choosing (`0`): a port
 * picked beforehand (`freePort()`) can be taken by another run's process before the inspector
 * binds it. `inspectorPort` reads the one it took.
 */
export const INSPECT_ANY_PORT = "--inspect=127.0.0.1:0";

/** The inspector's port, from what a process started with `INSPECT_ANY_PORT` printed on stderr. */
export function inspectorPort(stderr: string[]): number {
  const port = stderr.join("\n").match(/Debugger listening on ws:\/\/127\.0\.0\.1:(\d+)\//)?.[1];
  if (!port) throw new Error(`no inspector in what the process said:\n${stderr.join("\n")}`);
  return Number(port);
}

/** The URLs of the scripts V8 has loaded. */
export async function loadedScripts(inspectPort: number): Promise<string[]> {
  const [target] = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json();
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  const urls: string[] = [];
  try {
    await new Promise((open, fail) => [socket.onopen, socket.onerror] = [open, fail]);
    await new Promise<void>((done) => {
      socket.onmessage = ({ data }) => {
        const message = JSON.parse(data);
        if (message.method === "Debugger.scriptParsed") urls.push(message.params.url);
        if (message.id === 1) done(); // after every scriptParsed of what is loaded
      };
      socket.send(JSON.stringify({ id: 1, method: "Debugger.enable" }));
    });
  } finally {
    socket.close();
  }
  return urls;
}

const BUNDLE_CHUNK = /\/_build\/server\/[^/]+\.js$/;

/** The modules `scripts` hold: each bundle chunk read as the sources of its `.js.map`. */
export async function modulesOf(scripts: string[]): Promise<string[]> {
  const modules = await Promise.all(scripts.map(async (url) => {
    if (!BUNDLE_CHUNK.test(url)) return [url];
    const map = JSON.parse(await Deno.readTextFile(fileURLToPath(`${url}.map`)));
    return (map.sources as string[]).map((source) => new URL(source, url).href);
  }));
  return modules.flat();
}

/** `loadedScripts`, with each bundle chunk read as its modules (`modulesOf`). */
export async function loadedModules(inspectPort: number): Promise<string[]> {
  return modulesOf(await loadedScripts(inspectPort));
}
