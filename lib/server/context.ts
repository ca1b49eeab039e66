/**
 * @module
 * `requestContext()`: the request being answered, from anywhere in its work — a server action
 * above all, which gets only its arguments, but also a handler, a middleware or a page. It is
 * Hono's `Context`: `c.req.header(…)`, the cookies through `hono/cookie` (`getCookie(c, …)`, and
 * `setCookie(c, …)` for the response), what middleware set (`c.var.user`). Hono's context storage
 * keeps it, per request, across `await`s.
 */
import type { Context } from "hono";
import { tryGetContext } from "hono/context-storage";

export function requestContext(): Context {
  const c = tryGetContext();
  if (!c) throw new Error("requestContext() is only available while a request is being answered");
  return c;
}
