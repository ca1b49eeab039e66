/**
 * @module
 * `redirect("/thanks")` sends the browser elsewhere: from a server action (with JavaScript on or
 * off, instead of back to the page the form was on), a handler or a middleware. It throws, so its
 * type is `never` and an action keeps the return type its form's `useActionState` expects; the
 * server answers the throw with the redirect.
 */

const REDIRECT = Symbol.for("app.redirect");

export class Redirect extends Error {
  readonly [REDIRECT] = true;

  constructor(readonly location: string, readonly status: RedirectStatus) {
    super(`Redirect to ${location}`);
    this.name = "Redirect";
  }
}

/**
 * The statuses `redirect()` may answer with.
 *
 * @example
 * ```ts
 * import { redirect, type RedirectStatus } from "shell";
 *
 * const moved: RedirectStatus = 308;
 * export function toNewHome(): never {
 *   return redirect("/home", moved);
 * }
 * ```
 * @see docs/routing.md — A route module
 */
export type RedirectStatus = 301 | 302 | 303 | 307 | 308;

/**
 * Stops what runs and redirects to `url`: 303 (See Other) unless `status` says otherwise. It
 * throws, so its type is `never`; it works in handlers, middleware and server actions (with
 * JavaScript on or off, instead of going back to the page the form was on).
 *
 * @param url Where the browser goes: a path or an absolute URL.
 * @param status The redirect's status, 303 by default.
 * @returns Never: it throws.
 *
 * @example
 * ```ts
 * // routes/_notes/actions.ts
 * "use server";
 * import { kvOf } from "shell/data";
 * import { redirect, requestContext } from "shell";
 *
 * export async function addNote(form: FormData): Promise<void> {
 *   await kvOf(requestContext()).set(["notes", crypto.randomUUID()], String(form.get("text")));
 *   redirect("/notes"); // with JavaScript or without, the browser goes there
 * }
 * ```
 * @see docs/actions.md
 */
export function redirect(url: string | URL, status: RedirectStatus = 303): never {
  throw new Redirect(String(url), status);
}

export function isRedirect(error: unknown): error is Redirect {
  return typeof error === "object" && error !== null && REDIRECT in error;
}
