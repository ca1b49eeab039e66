/**
 * @module
 * The heap in use after a full collection, for tests that show something is let go (a leak grows
 * it by what each request leaves behind). V8's `gc` is exposed for the test process once, from a
 * context of its own: `deno test` runs without `--expose-gc`.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let gc: (() => void) | undefined;

/** The heap in use (bytes) after a full collection, once what was left to do is done. */
export async function heapAfterGc(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 100));
  if (!gc) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  gc();
  gc();
  return Deno.memoryUsage().heapUsed;
}
