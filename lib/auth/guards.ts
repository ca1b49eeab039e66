/**
 * @module
 * Guards for a folder's `_middleware.ts`: Hono middleware that runs before the folder's pages, API
 * routes and server actions alike. `requireUser()` lets signed-in users through with `state.user`
 * set; an anonymous page view is sent to the login page with `next` (its path and query), a form
 * posted without JavaScript likewise with the page it was on, and anything else - an API route, an
 * island's action call, a request that wants JSON - gets 401 (`httpError`: JSON, or `_error.tsx`).
 * `requireRole(...roles)` also needs one of the roles: 403 through `_error.tsx` otherwise.
 * `withUser()` only sets `state.user` when someone is signed in. Responses to a signed-in user are
 * `Cache-Control: private, no-cache` unless the route said otherwise: no shared cache keeps them,
 * and the browser revalidates them (signing out clears what it kept: sign_out.ts).
 */
import type { Context } from "hono";
import { formPage } from "../server/form_page.ts";
import { httpError } from "../shared/http_error.ts";
import { wantsJson } from "../server/error_pages.tsx";
import { scopeOf } from "../server/scope.ts";
import type { Middleware } from "../server/types.ts";
import { currentUser } from "./current.ts";
import { safeNext } from "./next.ts";
import { authSettings } from "./settings.ts";
import type { User } from "./users.ts";
import { internalsOf } from "../server/internals.ts";
import { markGuard } from "./role_names.ts";

/**
 * What the guards put on the request's state: declare it in your app's `State` to read
 * `state.user` typed (`interface State extends UserState { ... }`).
 *
 * @example
 * ```ts
 * // routes/_define.ts
 * import { createDefine } from "shell";
 * import type { UserState } from "shell/auth";
 *
 * export interface State extends UserState {
 *   theme?: "light" | "dark";
 * }
 * export const define = createDefine<State>();
 * ```
 * @see docs/users.md - The user in state
 */
export interface UserState {
  /** The signed-in user: set by `requireUser()`, `requireRole()` and `withUser()`. */
  user?: User;
}

/**
 * The signed-in user behind `requireUser()` or `requireRole()`, typed `User`: `state.user` stays
 * optional, since one `State` serves every folder and no type can know which guard ran, so this
 * says so once, checked. Where no guard set it (a page outside the guarded folder, a guard taken
 * away), it throws 401 (`httpError`: `_error.tsx`, or JSON) rather than read `undefined` - never
 * a failure, never another user's data. Not the guard's redirect to the login page, even for a
 * page: no guard read the session there, so a signed-in user meets it too, and would be sent back.
 *
 * @param state What the guard set: a page's `state`, a handler's `ctx.state`, a middleware's
 *   `c.var`, or `define.context().var` in a server action.
 * @returns The user.
 * @throws {HttpError} 401 "Sign in to continue." when nobody is signed in.
 *
 * @example
 * ```tsx
 * // routes/account/index.tsx, behind routes/account/_middleware.ts's requireUser()
 * import { createDefine } from "shell";
 * import { userOf, type UserState } from "shell/auth";
 *
 * export const define = createDefine<UserState>(); // the app's, in routes/_define.ts
 *
 * export default define.page(({ state }) => <p>Signed in as {userOf(state).email}</p>);
 * ```
 * @see docs/users.md - The user in state
 */
export function userOf(state: UserState): User {
  if (state.user) return state.user;
  throw httpError(401, SIGN_IN);
}

const SIGN_IN = "Sign in to continue.";

/**
 * Middleware that lets only signed-in users through, with `state.user` set. An anonymous page view
 * gets a 303 to the login page (`/login?next=<its path and query>`), a form posted without
 * JavaScript likewise with the page it came from; an API route, an island's action call or a
 * request that wants JSON gets 401 (`{"error":{"status":401,...}}`).
 *
 * @returns The middleware, for a folder's `_middleware.ts`.
 *
 * @example
 * ```ts
 * // routes/account/_middleware.ts
 * import { requireUser } from "shell/auth";
 *
 * export const handler = requireUser();
 * ```
 * @see docs/users.md - Guarding a folder
 */
export function requireUser(): Middleware {
  return async function requireUser(c, next) {
    const user = await currentUser(c);
    if (!user) return anonymous(c);
    c.set("user", user);
    await next();
    keepPrivate(c);
  };
}

/**
 * Middleware that lets through only signed-in users with at least one of `roles`, with
 * `state.user` set: anonymous requests as `requireUser()` answers them, others 403 through the
 * folder's `_error.tsx` (JSON for an API route or an action call), whose `state.user` says who was
 * refused.
 *
 * @param roles The roles that may pass; one of them is enough.
 * @returns The middleware, for a folder's `_middleware.ts`.
 * @throws {RangeError} With no role named. An app that declares its roles (`routes/_roles.ts`)
 * does not start when a folder's guard names another: a typo would lock everyone out. Its
 * declaration's `requireRole` is typed with the declared names, so `deno check` finds it first.
 *
 * @example
 * ```ts
 * // routes/admin/_middleware.ts
 * import { requireRole } from "shell/auth";
 *
 * export const handler = requireRole("admin");
 * ```
 * @see docs/users.md - Roles
 */
export function requireRole(...roles: string[]): Middleware {
  if (roles.length === 0) throw new RangeError("requireRole() needs at least one role");
  const guard: Middleware = async function requireRole(c, next) {
    const user = await currentUser(c);
    if (!user) return anonymous(c);
    // Set before refusing: the 403's error page can say which account lacks the role - and so the
    // refusal is the user's own, private as every answer to a signed-in user.
    c.set("user", user);
    if (!user.roles.some((role) => roles.includes(role))) {
      throw httpError(403, "Your account does not have access to this page.", {
        headers: { "Cache-Control": PRIVATE },
      });
    }
    await next();
    keepPrivate(c);
  };
  // For the app's start: a role its routes/_roles.ts does not declare stops it (role_names.ts).
  markGuard(guard, roles);
  return guard;
}

/**
 * Middleware that sets `state.user` when someone is signed in and lets everyone through: for
 * pages that show the user when there is one. It costs one KV read per request that carries the
 * session cookie, none otherwise; put it only where the pages read the user.
 *
 * @returns The middleware, for a folder's `_middleware.ts`.
 *
 * @example
 * ```ts
 * // routes/guestbook/_middleware.ts
 * import { withUser } from "shell/auth";
 *
 * export const handler = withUser();
 * ```
 * @see docs/users.md - The user in state
 */
export function withUser(): Middleware {
  return async function withUser(c, next) {
    const user = await currentUser(c);
    if (!user) return await next();
    c.set("user", user);
    await next();
    keepPrivate(c);
  };
}

/** Nobody is signed in: to the login page for a browser's page or form, 401 for the rest. */
function anonymous(c: Context): Response {
  const { loginPath } = authSettings(c);
  const toLogin = (next: string) =>
    c.redirect(`${loginPath}?next=${encodeURIComponent(safeNext(next))}`, 303);
  const { method } = c.req;
  if (internalsOf(c).action) {
    if (internalsOf(c).stubCall) throw httpError(401, SIGN_IN);
    const page = formPage(c, scopeOf(c).origins);
    return toLogin(page.pathname + page.search);
  }
  if ((method === "GET" || method === "HEAD") && !wantsJson(c)) {
    const url = new URL(c.req.url);
    return toLogin(url.pathname + url.search);
  }
  throw httpError(401, SIGN_IN);
}

/**
 * A signed-in user's response is theirs alone: no shared cache keeps it (as policy.ts's SIGNED_IN).
 */
const PRIVATE = "private, no-cache";

function keepPrivate(c: Context): void {
  if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", PRIVATE);
}
