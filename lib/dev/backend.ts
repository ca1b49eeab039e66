/**
 * @module
 * What answers the app's requests behind the dev server: the app's server (a child process) or,
 * while it cannot run, an error to show. One at a time: a restart stops the old server at once
 * (requests in flight finish) and holds new requests until the new one listens or fails.
 */
import { spawnServer, StartFailure } from "./server_process.ts";

export type Backend =
  & { version: number }
  & ({ origin: string; stop(): Promise<void> } | { title: string; details: string });

export interface Backends {
  /** The backend for a request: waits while a server starts. */
  current(): Promise<Backend>;
  /** A new server for the code at `version`; resolves once it listens or failed to. */
  restart(version: number): Promise<Backend>;
  /** An error in place of the app (its build failed). */
  fail(version: number, title: string, details: string): void;
  stop(): Promise<void>;
}

/** `onCrash`: the current server, which listened, exited unasked. */
export function backends(
  root: string,
  token: string,
  onCrash: (code: number, stderr: string) => void,
): Backends {
  let current: Promise<Backend> | undefined;
  const firstStart = Promise.withResolvers<void>();
  const replace = (next: Promise<Backend>) => {
    const previous = current;
    current = next;
    firstStart.resolve();
    previous?.then((backend) => {
      if ("stop" in backend) backend.stop();
    });
    return next;
  };
  const start = async (version: number): Promise<Backend> => {
    const server = spawnServer(root, token, (code, stderr) => {
      if (current === started) onCrash(code, stderr);
    });
    try {
      return { version, origin: await server.listening, stop: server.stop };
    } catch (error) {
      if (!(error instanceof StartFailure)) throw error;
      return { version, title: "The server could not start", details: error.stderr };
    }
  };
  let started: Promise<Backend>;
  return {
    async current() {
      await firstStart.promise;
      // One that was replaced while it started is stopping: wait for its successor.
      for (;;) {
        const pending = current!;
        const backend = await pending;
        if (pending === current) return backend;
      }
    },
    restart: (version) => replace(started = start(version)),
    fail(version, title, details) {
      replace(Promise.resolve({ version, title, details }));
    },
    async stop() {
      const backend = await current;
      if (backend && "stop" in backend) await backend.stop();
    },
  };
}
