/**
 * PLACEHOLDER for the board's sign-in guard: the board needs a signed-in user (DESIGN.md), and the
 * users issue (25) brings `requireUser()` in `shell/auth`. Once it has landed, this file becomes:
 *
 *   import { requireUser } from "shell/auth";
 *   export const handler = requireUser();
 *
 * Until then it lets every request through: it only marks where the guard goes (every page, event
 * stream and server action in routes/board/ passes here).
 */
import type { Middleware } from "shell";

export const handler: Middleware = function boardSignInPlaceholder(_c, next) {
  return next();
};
