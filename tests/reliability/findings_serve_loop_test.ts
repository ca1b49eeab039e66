/**
 * Issue 11, finding 5: a server whose accept loop fails must never look healthy. The server runs
 * under `prlimit --nofile=LIMIT` and is sent idle connections until it has no file descriptor
 * left to accept with. On Deno 2.9 its accept loop then ends for good (`Deno.serve`'s `finished`
 * rejects with `Deno.errors.Http: Too many open files`; the listener closes). The process must
 * either exit with a non-zero code after a JSON error line, or — should a Deno ever recover —
 * still answer once the connections are gone. Exiting 0, or living on without answering, fails.
 * Both ways of serving: `deno task start`'s server and `deno serve main.ts`.
 */
import assert from "node:assert/strict";
import { freePort } from "../helpers/server.ts";
import { builtTarget, startTarget, targetRoot, within } from "./target.ts";

const LIMIT = 300;
/** Bounds every wait: "did not hang", not a measure of speed. */
const WAIT_MS = 20_000;

const WAYS: [string, (port: number) => string[]][] = [
  ["deno task start's server", () => ["run", "-A", "lib/cli/start.ts"]],
  [
    "deno serve main.ts",
    (port) => ["serve", "-A", "--host", "127.0.0.1", "--port", `${port}`, "main.ts"],
  ],
];

Deno.test("finding 5: out of file descriptors, the server exits non-zero or keeps serving", async (t) => {
  for (const [way, args] of WAYS) {
    await t.step(way, async () => {
      const port = freePort();
      const child = new Deno.Command("prlimit", {
        args: [`--nofile=${LIMIT}:${LIMIT}`, Deno.execPath(), ...args(port)],
        cwd: await targetRoot(),
        env: { NODE_ENV: "production", PORT: `${port}`, HOSTNAME: "127.0.0.1" },
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const output = { stdout: "", stderr: "" };
      const collected = Promise.all(
        (["stdout", "stderr"] as const).map(async (name) => {
          for await (const text of child[name].pipeThrough(new TextDecoderStream())) {
            output[name] += text;
          }
        }),
      );
      let status: Deno.CommandStatus | undefined;
      const exited = child.status.then((done) => status = done);
      // A function, not the variable: it changes behind the type checker's back.
      const exitStatus = () => status;
      const conns: Deno.Conn[] = [];
      try {
        await until(
          () => /Listening on/.test(output.stdout + output.stderr) || !!exitStatus(),
          "Listening",
        );
        assert.equal(exitStatus(), undefined, `the server did not start:\n${output.stderr}`);

        // Idle connections until the server can accept no more (bounded), or exits.
        for (let i = 0; i < LIMIT + 100 && !exitStatus(); i++) {
          try {
            conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
          } catch {
            break; // refused or reset: the listener is gone
          }
        }
        await within(exited, WAIT_MS);
        for (const conn of conns.splice(0)) conn.close();

        const log = `stdout:\n${output.stdout.slice(-2000)}\nstderr:\n${
          output.stderr.slice(-2000)
        }`;
        const exit = exitStatus();
        if (exit) {
          assert.notEqual(exit.code, 0, `exited 0 as if asked to\n${log}`);
          await collected;
          const fatal = output.stdout.split("\n").filter((line) => line.startsWith("{"))
            .map((line) => JSON.parse(line)).find((line) => line.level === "error");
          assert.ok(fatal, `a JSON error line says why\n${log}`);
          assert.match(fatal.msg, /Too many open files|stopped accepting/);
        } else {
          // Still running: it must serve again now that descriptors are free.
          await delay(500);
          const res = await fetch(`http://127.0.0.1:${port}/`, {
            signal: AbortSignal.timeout(WAIT_MS),
          }).catch((error) => error as Error);
          assert.ok(res instanceof Response, `alive but not serving: ${res}\n${log}`);
          assert.equal(res.status, 200);
          await res.body?.cancel();
        }
      } finally {
        for (const conn of conns) conn.close();
        if (!exitStatus()) child.kill("SIGKILL");
        await exited;
        await collected;
      }
    });
  }
});

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(done: () => boolean, what: string): Promise<void> {
  const giveUp = performance.now() + 30_000;
  while (!done()) {
    if (performance.now() > giveUp) throw new Error(`${what} not seen in 30 s`);
    await delay(50);
  }
}

Deno.test("finding 5: an unhandled Deno.errors.Http of the app's own is logged, not fatal", async () => {
  const built = await builtTarget({
    "routes/api/orphan.ts": `
      export const handler = {
        GET() {
          Promise.reject(new Deno.errors.Http("an upgrade that failed, say"));
          return new Response("answered");
        },
      };
    `,
  });
  await using server = await startTarget({}, { root: built.root });
  const res = await server.fetch("/api/orphan");
  assert.equal(await res.text(), "answered");
  const line = await server.waitForLog((line) => /^Unhandled rejection/.test(String(line.msg)));
  assert.match(String(line.msg), /an upgrade that failed/);
  assert.ok(line.digest, "logged with a digest");
  const again = await server.fetch("/");
  assert.equal(again.status, 200, "still serving");
  await again.body?.cancel();
});
