/**
 * @module
 * The worker `stale_build.ts` starts: answers one `{ root, dev }` with `{ stale }` (or `{ error }`, its
 * stack), then is terminated.
 */
import { isStale } from "../build/fingerprint.ts";

const scope = self as unknown as {
  onmessage: (event: MessageEvent<{ root: string; dev: boolean }>) => void;
  postMessage(message: { stale: boolean } | { error: string }): void;
};

scope.onmessage = async ({ data: { root, dev } }) => {
  try {
    scope.postMessage({ stale: await isStale(root, dev) });
  } catch (error) {
    scope.postMessage({ error: error instanceof Error && error.stack || String(error) });
  }
};
