/**
 * @module
 * The mechanism an error event names for a failure of no request, the same under both server SDK
 * set-ups (`server.ts`, `on_otel.ts`); it imports no SDK, so neither loads the other's bundle.
 */

/** A background job's failure (KV's queue), or a promise nobody handled. */
export function mechanismOf(job: string | undefined): string {
  return job === undefined ? "auto.deno.unhandledrejection" : "auto.queue.deno_kv";
}
