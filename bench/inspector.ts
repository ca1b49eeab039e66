/**
 * @module
 * What a server started with `--inspect` holds, asked over the inspector protocol: the scripts V8
 * has loaded and the JavaScript heap used after two full collections (`bench/loaded.ts`,
 * `bench/bundled_server.ts`).
 */

/** A script V8 holds, as `Debugger.scriptParsed` reports it. */
export interface Script {
  url: string;
  length: number;
  sourceMapURL?: string;
}

/** What a server holds: its scripts and its heap after two full collections, in MB. */
export interface Held {
  scripts: Script[];
  heapMb: number;
}

/** A loopback port free at the time of asking (for `--inspect=127.0.0.1:PORT`). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Over the inspector on `inspectPort`: the scripts V8 holds and the heap after two collections. */
export async function heldBy(inspectPort: number): Promise<Held> {
  const targets = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json();
  const socket = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((open) => socket.onopen = open);
  const pending = new Map<number, (result: unknown) => void>();
  const scripts: Script[] = [];
  let next = 0;
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
    else if (message.method === "Debugger.scriptParsed") scripts.push(message.params);
  };
  const send = <T>(method: string) =>
    new Promise<T>((done) => {
      const id = ++next;
      pending.set(id, done as (result: unknown) => void);
      socket.send(JSON.stringify({ id, method, params: {} }));
    });
  try {
    // Enabling the debugger replays every script already parsed.
    await send("Debugger.enable");
    await send("Debugger.disable");
    for (let i = 0; i < 2; i++) await send("HeapProfiler.collectGarbage");
    const { usedSize } = await send<{ usedSize: number }>("Runtime.getHeapUsage");
    return { scripts, heapMb: usedSize / 2 ** 20 };
  } finally {
    socket.close();
  }
}
