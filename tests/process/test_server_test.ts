/**
 * @module
 * The tests' server helper (`tests/helpers/server.ts`): a port chosen free is free only until
 * something binds it, and tests run in parallel bind ports all the time. A server that finds its
 * port taken is started again on another, with settings made for that port.
 */
import assert from "node:assert/strict";
import { startServer } from "../helpers/server.ts";

Deno.test("a server whose port was taken before it bound is started again on another", async () => {
  // Another process's server, on the port the first start is given (as if it had bound it first).
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const takenPort = (taken.addr as Deno.NetAddr).port;
  const ports: number[] = [];
  await using server = await startServer(
    (port) => ({ APP_ORIGIN: `http://127.0.0.1:${port}` }),
    {
      args: (port) => {
        ports.push(ports.length === 0 ? takenPort : port);
        return ["serve", "-A", "--host", "127.0.0.1", `--port=${ports.at(-1)}`, "main.ts"];
      },
    },
  );
  assert.equal(ports.length, 2, "a second start");
  assert.equal(server.port, ports[1]);
  assert.notEqual(server.port, takenPort);
  const res = await server.fetch("/");
  await res.body?.cancel();
  assert.equal(res.status, 200);
});
