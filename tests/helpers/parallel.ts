/**
 * @module
 * `deno serve --parallel main.ts` with two workers, on a throwaway copy of the project whose
 * responses name the worker that answered (`X-Worker`), so a test can show it reached both.
 */
import assert from "node:assert/strict";
import { copyProject, type ProjectCopy } from "./project_copy.ts";
import { startServer, type TestServer } from "./server.ts";

/** A copy of the project whose responses name their worker; built, as `deno serve` needs. */
export async function workerNamingProject(): Promise<ProjectCopy> {
  const copy = await copyProject();
  await copy.write(
    "routes/_middleware.ts",
    `const worker = crypto.randomUUID();
    export const handler = async (c, next) => {
      await next();
      c.header("X-Worker", worker);
    };`,
  );
  const { success, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "lib/cli/build.ts"],
    cwd: copy.root,
    env: { NODE_ENV: "production" },
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(success, new TextDecoder().decode(stderr));
  return copy;
}

const SERVE = ["serve", "-A", "--parallel", "--host", "127.0.0.1"];

/**
 * `deno serve --parallel main.ts` with two workers, on `port` if given; ended with SIGKILL: Deno
 * 2.9.6's `--parallel` can miss a SIGTERM that comes while a worker is still starting.
 */
export async function serveParallel(
  root: string,
  env: Record<string, string>,
  port?: number,
): Promise<TestServer> {
  const server = await startServer({ DENO_JOBS: "2", ...env }, {
    root,
    port,
    args: (port) => [...SERVE, `--port=${port}`, "main.ts"],
  });
  return Object.assign(server, {
    async [Symbol.asyncDispose]() {
      server.kill();
      await server.stop();
    },
  });
}
