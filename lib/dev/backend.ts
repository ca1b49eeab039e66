/**
 * @module
 * What answers the app's requests behind the dev server: the app's server (a child process) or,
 * while it cannot run, an error to show. One at a time: a restart stops the old server at once
 * (requests in flight finish) and holds new requests until the new one listens or fails. A server
 * only behind the code (the pages updated themselves) restarts when a request comes, not at every
 * save. A spare server, the framework loaded, stands by for the next restart (`standby.ts`).
 */
import { type ServerProcess, spawnServer, StartFailure } from "./server_process.ts";

export type Backend =
  & { version: number }
  & ({ origin: string; stop(): Promise<void> } | { title: string; details: string });

export interface Backends {
  /** The backend for a request: waits while a server starts. */
  current(): Promise<Backend>;
  /** A new server for the code at `version`; resolves once it listens or failed to. */
  restart(version: number): Promise<Backend>;
  /** A new server for the code at `version`, when a request comes. */
  restartOnRequest(version: number): void;
  /** An error in place of the app (its build failed). */
  fail(version: number, title: string, details: string): void;
  /** The framework changed: the spare has loaded the old one. */
  discardSpare(): void;
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
  /** The version a request is to restart the server for. */
  let behind: number | undefined;
  /** The server last started: the one whose exit is a crash. */
  let live: ServerProcess | undefined;
  const spawn = (): ServerProcess => {
    const server = spawnServer(root, token, (code, stderr) => {
      if (server === live) onCrash(code, stderr);
    });
    return server;
  };
  let spare: ServerProcess | undefined = spawn();

  const replace = (next: Promise<Backend>) => {
    behind = undefined;
    const previous = current;
    current = next;
    firstStart.resolve();
    previous?.then((backend) => {
      if ("stop" in backend) backend.stop();
    });
    return next;
  };
  const start = async (version: number): Promise<Backend> => {
    const server = live = spare ?? spawn();
    spare = undefined;
    server.go();
    try {
      return { version, origin: await server.listening, stop: server.stop };
    } catch (error) {
      if (!(error instanceof StartFailure)) throw error;
      return { version, title: "The server could not start", details: error.stderr };
    } finally {
      // Not sooner: it would slow this one's start.
      spare ??= spawn();
    }
  };
  return {
    async current() {
      await firstStart.promise;
      if (behind !== undefined) replace(start(behind));
      // One that was replaced while it started is stopping: wait for its successor.
      for (;;) {
        const pending = current!;
        const backend = await pending;
        if (pending === current) return backend;
      }
    },
    restart: (version) => replace(start(version)),
    restartOnRequest(version) {
      behind = version;
    },
    fail(version, title, details) {
      replace(Promise.resolve({ version, title, details }));
    },
    discardSpare() {
      spare?.stop();
      spare = undefined;
    },
    async stop() {
      const backend = await current;
      await Promise.all([
        backend && "stop" in backend ? backend.stop() : undefined,
        spare?.stop(),
      ]);
    },
  };
}
