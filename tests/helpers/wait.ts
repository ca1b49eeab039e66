/**
 * @module
 * Bounded waits for events: a test that waits for something must fail, not hang, when it never
 * comes.
 */

/** Settles like `promise`, or rejects naming `what` once `ms` have passed. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${ms} ms for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Starts `run` at once; the function returned awaits its result. For work that mostly waits (a
 * deadline, a page's idle time) started side by side and checked one by one, each by its own step:
 * a failure is thrown where the result is awaited, never left as an unhandled rejection.
 */
export function started<T>(run: () => Promise<T>): () => Promise<T> {
  const outcome = run().then((value) => ({ value }), (error: unknown) => ({ error }));
  return async () => {
    const result = await outcome;
    if ("error" in result) throw result.error;
    return result.value;
  };
}
