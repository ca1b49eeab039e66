/**
 * @module
 * `kvOf(ctx)`: the KV store of the app answering a request — from a handler's `ctx`, a
 * middleware's `c`, or `requestContext()` in a server action. The entry points open the store
 * (`KV_PATH`) and pass it to `createApp` as `kv`; each app keeps its own, so two apps in one
 * process (tests) can use two stores.
 */
import { scopeOf, type ScopeSource } from "../server/scope.ts";

export function kvOf(from: ScopeSource): Deno.Kv {
  const { kv } = scopeOf(from);
  if (!kv) {
    throw new Error(
      "This app has no KV store: pass `kv` to createApp (the entry points open it from KV_PATH)",
    );
  }
  return kv;
}
