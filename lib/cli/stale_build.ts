/**
 * @module
 * Whether the last build is stale (`build/fingerprint.ts`), asked of a worker of its own that ends
 * with the answer. The check runs once, at start-up, but the modules it loads (the fingerprint, the
 * build's graph and salt, `node:fs`, `node:crypto`) would stay in the server's heap for as long as
 * it serves, V8 never unloading a module; a worker's modules go with its isolate.
 */

/** `isStale(root, dev)` of `build/fingerprint.ts`, in a worker that is gone once it answers. */
export function isStaleApart(root: string, dev: boolean): Promise<boolean> {
  const worker = new Worker(new URL("./stale_build_worker.ts", import.meta.url), {
    type: "module",
  });
  return new Promise<boolean>((resolve, reject) => {
    worker.onmessage = ({ data }: MessageEvent<{ stale: boolean } | { error: string }>) =>
      "error" in data ? reject(new Error(data.error)) : resolve(data.stale);
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(event.message));
    };
    worker.postMessage({ root, dev });
  }).finally(() => worker.terminate());
}
