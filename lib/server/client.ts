/**
 * @module
 * `clientAddress(c)`: who is asking, for per-client limits. By default the address of the
 * connection (`Deno.serve`'s `remoteAddr`, which reaches the app as Hono's `c.env`). With
 * `trustProxy` (env `TRUST_PROXY`), the app sits behind a proxy that connects on every client's
 * behalf, and the client is the last entry of `X-Forwarded-For`: each proxy appends the address
 * it was connected from, so the last entry is the one our own proxy wrote, while every entry
 * before it came from the client (or proxies we know nothing of) and can be forged at will.
 */
import type { Context } from "hono";
import { scopeOf } from "./scope.ts";

/** Longer than any IPv6 address with a zone: what a proxy writes, not what a forger might. */
const MAX_ADDRESS = 64;

/**
 * The client's address, or `undefined` when there is none to know: a request that did not come
 * through `Deno.serve` (`app.request()` in tests, an embedder passing no `info`).
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
