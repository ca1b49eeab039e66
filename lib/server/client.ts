/**
 * @module
 * `clientAddress(c)`: who is asking, for per-client limits. By default the address of the
 * connection (`Deno.serve`'s `remoteAddr`, which reaches the app as Hono's `c.env`). With
 * `trustProxy` (env `TRUST_PROXY`), the app sits behind a proxy that connects on every client's
 * behalf, and the client is the last entry of `X-Forwarded-For`: each proxy appends the address
 * it was connected from, so the last entry is the one our own proxy wrote, while every entry
 * before it came from the client (or proxies we know nothing of) and can be forged at will.
 *
 * `limitedClient(c)`: the same, as per-client limits count it - an IPv6 address by its /64, the
 * network an ISP hands one subscriber at the least: counted address by address, one home's machine
 * was as many clients as it chose addresses (2^64).
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

/**
 * Who is asking, as per-client limits count them: `clientAddress`, an IPv6 address cut to its /64
 * (`2001:db8:1:2::/64`) - every address of one subscriber's network is one client - an IPv4
 * client's (`::ffff:192.0.2.1` from a dual-stack listener, `64:ff9b::192.0.2.1` from NAT64) as its
 * IPv4 address, and without the port a
 * proxy may write with it (`192.0.2.1:51234`, `[2001:db8::1]:443`): a new one each connection.
 */
export function limitedClient(c: Context): string | undefined {
  const address = clientAddress(c);
  return address === undefined ? undefined : networkOf(address);
}

/**
 * An IPv6 address that is an IPv4 client's, as the URL parser writes it: mapped (`::ffff:0:0/96`,
 * a dual-stack listener), translated (`::ffff:0:0:0/96`) or behind NAT64 or SIIT's well-known
 * prefix (`64:ff9b::/96`). Each is its IPv4 address: by their /64, every IPv4 client one.
 */
const EMBEDS_IPV4 = /^(?:::ffff:(?:0:)?|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;
const IPV4_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const IPV6_PORT = /^\[([^\]]+)\](?::\d{1,5})?$/;

/** The /64 of an IPv6 address, the IPv4 address it maps, either without a port; else as it is. */
function networkOf(address: string): string {
  const v4 = IPV4_PORT.exec(address);
  if (v4) return v4[1];
  if (!address.includes(":")) return address;
  // The URL parser writes an IPv6 host in one way: lower case, zeros dropped, `::` once.
  const bare = IPV6_PORT.exec(address)?.[1] ?? address;
  const host = URL.parse(`http://[${bare}]/`)?.hostname.slice(1, -1);
  if (!host) return address; // with a zone (`fe80::1%eth0`), say: a local client
  const mapped = EMBEDS_IPV4.exec(host);
  if (mapped) {
    const [high, low] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
    return [high >> 8, high & 255, low >> 8, low & 255].join(".");
  }
  const [head, tail] = host.split("::");
  const groups = head ? head.split(":") : [];
  if (tail !== undefined && groups.length < 4) {
    const rest = tail ? tail.split(":") : [];
    groups.push(...Array(8 - groups.length - rest.length).fill("0"), ...rest);
  }
  return `${groups.slice(0, 4).join(":")}::/64`;
}
