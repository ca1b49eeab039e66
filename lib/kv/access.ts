/**
 * @module
 * `kvOf(ctx)`: the KV store of the app answering a request - from a handler's `ctx`, a
 * middleware's `c`, or `requestContext()` in a server action. The entry points open the store
 * (`KV_PATH`) and pass it to `createApp` as `kv`; each app keeps its own, so two apps in one
 * process (tests) can use two stores.
 */
import { type AnyContext, scopeOf } from "../server/scope.ts";

/**
 * The KV store of the app answering this request, from whatever the code has in hand: a handler's
 * `ctx`, a middleware's `c`, or `requestContext()` in a server action. (A page renders what its
 * handler loaded: it reads no store.)
 *
 * @param from The request's context, in any of its forms.
 * @returns The app's store (`AppOptions.kv`), opened by the entry points from `KV_PATH`.
 * @throws {Error} When the app was made without a store.
 *
 * @example
 * ```ts
 * // routes/api/visits.ts
 * import { defineRoute } from "shell";
 * import { kvOf } from "shell/data";
 *
 * export const handler = defineRoute("api/visits.ts").handlers({
 *   async GET(_req, ctx) {
 *     const visits = await kvOf(ctx).get<Deno.KvU64>(["visits"]);
 *     return Response.json({ visits: String(visits.value?.value ?? 0n) });
 *   },
 * });
 * ```
 * @see docs/data.md - Reading and writing from the app
 */
export function kvOf(from: AnyContext): Deno.Kv {
  const { kv } = scopeOf(from);
  if (!kv) {
    throw new Error(
      "This app has no KV store: pass `kv` to createApp (the entry points open it from KV_PATH)",
    );
  }
  return kv;
}
