/**
 * @module
 * A TCP proxy on loopback that can cut every connection through it at once, mid-stream — what a
 * flaky network, a load balancer's idle timeout or a restarted proxy does to an event stream.
 */

export interface CuttingProxy extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`: the proxy, forwarding to the target. */
  origin: string;
  /** Closes every connection open through it now; returns how many there were. */
  cutAll(): number;
}

export function cuttingProxy(target: { hostname: string; port: number }): CuttingProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<() => void>();
  const accepting = (async () => {
    for await (const client of listener) {
      let upstream: Deno.TcpConn;
      try {
        upstream = await Deno.connect(target);
      } catch {
        client.close();
        continue;
      }
      const cut = () => {
        open.delete(cut);
        for (const conn of [client, upstream]) {
          try {
            conn.close();
          } catch { /* closed already */ }
        }
      };
      open.add(cut);
      client.readable.pipeTo(upstream.writable).catch(() => {}).finally(cut);
      upstream.readable.pipeTo(client.writable).catch(() => {}).finally(cut);
    }
  })().catch(() => {});
  return {
    origin: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    cutAll() {
      const cuts = [...open];
      for (const cut of cuts) cut();
      return cuts.length;
    },
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const cut of [...open]) cut();
      await accepting;
    },
  };
}
