/**
 * @module
 * Whether the last build is stale (`build/fingerprint.ts`), asked of a worker of its own that ends
 * with the answer. The check runs once, at start-up, but the modules it loads (the fingerprint, the
 * build's graph and salt, `node:fs`, `node:crypto`) would stay in the server's heap for as long as
 * it serves, V8 never unloading a module; a worker's modules go with its isolate. What the check
 * throws is thrown again here as it was (name, message, stack, `code`): a start-up that fails says
 * what failed, not that a worker did.
 */

/** What the check threw, as a worker can post it (an `Error` arrives without its `code`). */
export interface CheckError {
  name: string;
  message: string;
  stack?: string;
  /** A system error's (`EISDIR`, `EACCES`, ...). */
  code?: string;
}

/** What the worker (`stale_build_worker.ts`) answers. */
export type StaleAnswer = { stale: boolean } | { error: CheckError };

/** `isStale(root, dev)` of `build/fingerprint.ts`, in a worker that is gone once it answers. */
export function isStaleApart(root: string, dev: boolean): Promise<boolean> {
  const worker = new Worker(new URL("./stale_build_worker.ts", import.meta.url), {
    type: "module",
  });
  return new Promise<boolean>((resolve, reject) => {
    worker.onmessage = ({ data }: MessageEvent<StaleAnswer>) =>
      "error" in data ? reject(thrownAgain(data.error)) : resolve(data.stale);
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(event.message));
    };
    worker.postMessage({ root, dev });
  }).finally(() => worker.terminate());
}

function thrownAgain({ name, message, stack, code }: CheckError): Error {
  const error = new Error(message);
  error.name = name;
  // The worker's stack: where the check failed, not where its answer arrived.
  if (stack) error.stack = stack;
  if (code) Object.assign(error, { code });
  return error;
}
