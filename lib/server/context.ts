/**
 * @module
 * `requestContext()`: inside a server action (and the middleware in front of it), the request
 * being answered - an action gets only its arguments. It is Hono's `Context`: `c.req.header(...)`,
 * the cookies through `hono/cookie` (`getCookie(c, ...)`, and `setCookie(c, ...)` for the
 * response), what middleware set (`c.get("user")`). Hono's context storage keeps it across
 * `await`s; handlers and pages have theirs already (`ctx`, props), and do not pay for the storage.
 */
import { tryGetContext } from "hono/context-storage";
import type { Context } from "./types.ts";

/**
 * The request a server action answers (and the middleware in front of it sees): Hono's `Context`,
 * kept across `await`s. Read headers (`c.req.header(...)`), cookies (`getCookie(c, ...)` from
 * `hono/cookie`, and `setCookie` for the response) and what middleware set (`c.get("user")`).
 *
 * @returns The request's context.
 * @throws {Error} Outside a server action or its middleware.
 *
 * @example
 * ```ts
 * // routes/_greeting/actions.ts
 * "use server";
 * import { getCookie } from "hono/cookie";
 * import { requestContext } from "shell";
 *
 * export async function greet(): Promise<string> {
 *   const c = requestContext();
 *   return `Hello, ${getCookie(c, "name") ?? String(c.get("user") ?? "stranger")}`;
 * }
 * ```
 * @see docs/actions.md - The request: `requestContext()`
 */
export function requestContext(): Context {
  const c = tryGetContext();
  if (!c) throw new Error("requestContext() is only available while a server action runs");
  return c;
}
