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

/**
 * How much the heap grew since `before` (bytes), measured again until it is under `bound` or
 * `ms` have passed. What a loaded machine has not yet let go after a fixed pause (a watch being
 * cancelled, a render's last tasks) is not a leak, and goes; a leak stays, and fails the bound.
 */
export async function heapGrowth(before: number, bound: number, ms = 30_000): Promise<number> {
  const until = performance.now() + ms;
  for (;;) {
    const grown = await heapAfterGc() - before;
    if (grown < bound || performance.now() > until) return grown;
  }
}
