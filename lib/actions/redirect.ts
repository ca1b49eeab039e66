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

export type RedirectStatus = 301 | 302 | 303 | 307 | 308;

/** Stops what runs and redirects to `url`: 303 (See Other) unless `status` says otherwise. */
export function redirect(url: string | URL, status: RedirectStatus = 303): never {
  throw new Redirect(String(url), status);
}

export function isRedirect(error: unknown): error is Redirect {
  return typeof error === "object" && error !== null && REDIRECT in error;
}
