/**
 * @module
 * `deno serve --parallel main.ts` with two workers, on a built copy of the test app (or of another
 * tree: the example's tests name the project) whose responses name the worker that answered
 * (`X-Worker`), so a test can show it reached both.
 */
import { builtCopy } from "./built_copy.ts";
import { type ServerEnv, startServer, type TestServer } from "./server.ts";

/** A `routes/_middleware.ts` whose responses name the worker that answered (`X-Worker`). */
export const WORKER_NAMING_MIDDLEWARE = `const worker = crypto.randomUUID();
    export const handler = async (c, next) => {
      await next();
      c.header("X-Worker", worker);
    };`;

/** A copy of the test app (or of `from`) whose responses name their worker; built. */
export function workerNamingProject(from?: string): Promise<string> {
  return builtCopy(from ? "worker-naming-tree" : "worker-naming", {
    "routes/_middleware.ts": WORKER_NAMING_MIDDLEWARE,
  }, { from });
}

const SERVE = ["serve", "-A", "--parallel", "--host", "127.0.0.1"];

/**
 * `deno serve --parallel main.ts` with two workers, on `port` if given; ended with SIGKILL: Deno
 * 2.9.6's `--parallel` can miss a SIGTERM that comes while a worker is still starting.
 */
export async function serveParallel(
  root: string,
  env: ServerEnv,
  port?: number,
): Promise<TestServer> {
  const given = (port: number) => typeof env === "function" ? env(port) : env;
  const server = await startServer((port) => ({ DENO_JOBS: "2", ...given(port) }), {
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
