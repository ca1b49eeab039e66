/**
 * @module
 * `requestContext()`: inside a server action (and the middleware in front of it), the request
 * being answered — an action gets only its arguments. It is Hono's `Context`: `c.req.header(…)`,
 * the cookies through `hono/cookie` (`getCookie(c, …)`, and `setCookie(c, …)` for the response),
 * what middleware set (`c.get("user")`). Hono's context storage keeps it across `await`s; handlers
 * and pages have theirs already (`ctx`, props), and do not pay for the storage.
 */
import type { Context } from "hono";
import { tryGetContext } from "hono/context-storage";

export function requestContext(): Context {
  const c = tryGetContext();
  if (!c) throw new Error("requestContext() is only available while a server action runs");
  return c;
}
