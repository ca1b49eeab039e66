/**
 * @module
 * `redirect("/thanks")` sends the browser elsewhere: from a server action (with JavaScript on or
 * off, instead of back to the page the form was on), a handler or a middleware. It throws, so its
 * type is `never` and an action keeps the return type its form's `useActionState` expects; the
 * server answers the throw with the redirect. A URL with a control character (CR and LF would
 * split the `Location` header) is refused at the call, with a `TypeError` that says so - often it
 * came from a client (`redirect(form.get("next"))`), and the code that passed it on must check it.
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
 * @see docs/routing.md - A route module
 */
export type RedirectStatus = 301 | 302 | 303 | 307 | 308;

// deno-lint-ignore no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Stops what runs and redirects to `url`: 303 (See Other) unless `status` says otherwise. It
 * throws, so its type is `never`; it works in handlers, middleware and server actions (with
 * JavaScript on or off, instead of going back to the page the form was on).
 *
 * @param url Where the browser goes: a path or an absolute URL; one with a control character (CR,
 * LF, tab, ...) is refused with a `TypeError`.
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
  const location = String(url);
  if (CONTROL.test(location)) {
    throw new TypeError(
      `redirect() refuses a URL with a control character (CR, LF, tab, \u2026): ${
        JSON.stringify(location.slice(0, 200))
      }`,
    );
  }
  throw new Redirect(location, status);
}

export function isRedirect(error: unknown): error is Redirect {
  return typeof error === "object" && error !== null && REDIRECT in error;
}
