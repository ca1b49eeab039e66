/**
 * @module
 * `clientAddress(c)`: who is asking, for per-client limits. By default the address of the
 * connection (`Deno.serve`'s `remoteAddr`, which reaches the app as Hono's `c.env`). With
 * `trustProxy` (env `TRUST_PROXY`), the app sits behind a proxy that connects on every client's
 * behalf, and the client is the last entry of `X-Forwarded-For`: each proxy appends the address
 * it was connected from, so the last entry is the one our own proxy wrote, while every entry
 * before it came from the client (or proxies we know nothing of) and can be forged at will.
 */
import { scopeOf } from "./scope.ts";
import type { Context } from "./types.ts";

/** Longer than any IPv6 address with a zone: what a proxy writes, not what a forger might. */
const MAX_ADDRESS = 64;

/**
 * Who is asking, for per-client limits: the connection's address, or with `TRUST_PROXY` the last
 * entry of `X-Forwarded-For` (the one the app's own proxy wrote). `undefined` when there is none
 * to know: a request that did not come through `Deno.serve` (`app.request()` in tests).
 *
 * @param c The request's context (a middleware's `c`, `requestContext()`).
 * @returns The client's IP address, if known.
 *
 * @example
 * ```ts
 * import { clientAddress, type Middleware } from "shell";
 *
 * export const handler: Middleware = async function logClient(c, next) {
 *   console.log(`request from ${clientAddress(c) ?? "unknown"}`);
 *   await next();
 * };
 * ```
 * @see docs/data.md - Rate limits
 */
export function clientAddress(c: Context): string | undefined {
  if (scopeOf(c).trustProxy) {
    const forwarded = c.req.header("x-forwarded-for");
    const last = forwarded?.slice(forwarded.lastIndexOf(",") + 1).trim();
    if (last && last.length <= MAX_ADDRESS) return last;
  }
  const remote = (c.env as Deno.ServeHandlerInfo | undefined)?.remoteAddr;
  return remote && "hostname" in remote ? remote.hostname : undefined;
}
