/**
 * @module
 * `throw notFound()` from a handler or during render answers with `_404.tsx` and status 404.
 */

const NOT_FOUND = Symbol.for("app.notFound");

export class NotFoundError extends Error {
  readonly [NOT_FOUND] = true;
  constructor(message = "Not found") {
    super(message);
    this.name = "NotFoundError";
  }
}

export function notFound(message?: string): NotFoundError {
  return new NotFoundError(message);
}

export function isNotFound(error: unknown): boolean {
  return typeof error === "object" && error !== null && NOT_FOUND in error;
}
