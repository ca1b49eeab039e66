/**
 * @module
 * `Cache-Control` for what the shared page cache does not keep: a page (HTML) without a header of
 * its handler's is private (`policy.ts`: `PRIVATE`, or `SIGNED_IN` once it read a session).
 */
import type { Context } from "hono";
// Its `Internals.session`: whether the request read its session.
import type {} from "../auth/current.ts";
import { internalsOf } from "../server/internals.ts";
import type { Dispatch } from "./page_cache.ts";
import { PRIVATE, SIGNED_IN } from "./policy.ts";

/** A page (HTML) says how it may be cached; a handler's own `Cache-Control` stands. */
export function privateByDefault(dispatch: Dispatch): Dispatch {
  return async (c) => {
    const res = await dispatch(c);
    if (
      !res.headers.has("Cache-Control") &&
      res.headers.get("Content-Type")?.startsWith("text/html")
    ) {
      res.headers.set("Cache-Control", privateFor(c));
    }
    return res;
  };
}

/** A page that read a session is kept nowhere, as the guards of `shell/auth` say too. */
export function privateFor(c: Context): string {
  return internalsOf(c).session ? SIGNED_IN : PRIVATE;
}
