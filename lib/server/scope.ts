/**
 * @module
 * What a request's code needs from the app answering it, beyond the request itself: the app's KV
 * store, whether the proxy's forwarded address is trusted, and the signal that the app is closing.
 * The app sets it on every request as `c.var.appScope` — one object per app, so nothing is made per
 * request, and two apps in one process keep their own. Read it through `kvOf`, `clientAddress` and
 * `eventStream` rather than directly.
 */
import type { MiddlewareHandler } from "hono";
import type { Context, State } from "./types.ts";

export interface AppScope {
  /** `AppOptions.kv`. */
  readonly kv?: Deno.Kv;
  /** `AppOptions.trustProxy`. */
  readonly trustProxy: boolean;
  /** Aborts when the app closes: long-lived responses end then. */
  readonly closing: AbortSignal;
}

declare module "hono" {
  interface ContextVariableMap {
    appScope: AppScope;
  }
}

/**
 * Whatever a request's code has in hand: a middleware's `c`, `requestContext()` in a server
 * action, a handler's `ctx`, or a page's props. `kvOf` and `eventStream` take any of them.
 *
 * @example
 * ```ts
 * import type { AnyContext } from "shell";
 * import { kvOf } from "shell/data";
 *
 * export async function countVisit(from: AnyContext): Promise<void> {
 *   await kvOf(from).atomic().sum(["visits"], 1n).commit();
 * }
 * ```
 * @see docs/data.md — Reading and writing from the app
 */
export type AnyContext = Context | { state: State };

export function appScope(scope: AppScope): MiddlewareHandler {
  return function appScope(c, next) {
    c.set("appScope", scope);
    return next();
  };
}

export function scopeOf(from: AnyContext): AppScope {
  const scope = "state" in from
    ? from.state.appScope as AppScope | undefined
    : from.get("appScope");
  if (!scope) throw new Error("No app scope: this request is not being answered by createApp()");
  return scope;
}
