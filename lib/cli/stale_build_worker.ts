/**
 * @module
 * The worker `stale_build.ts` starts: answers one `{ root, dev }` with `{ stale }` (or `{ error }`:
 * the thrown error's name, message, stack and system code, for `stale_build.ts` to throw again as
 * it was), then is terminated.
 */
import { isStale } from "../build/fingerprint.ts";
import type { StaleAnswer } from "./stale_build.ts";

const scope = self as unknown as {
  onmessage: (event: MessageEvent<{ root: string; dev: boolean }>) => void;
  postMessage(message: StaleAnswer): void;
};

scope.onmessage = async ({ data: { root, dev } }) => {
  try {
    scope.postMessage({ stale: await isStale(root, dev) });
  } catch (error) {
    const { name, message, stack, code } = error instanceof Error
      ? error as Error & { code?: unknown }
      : { name: "Error", message: String(error), stack: undefined, code: undefined };
    scope.postMessage({
      error: { name, message, stack, code: typeof code === "string" ? code : undefined },
    });
  }
};
