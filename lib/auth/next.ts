/**
 * @module
 * `safeNext(next)`: where to go after signing in, only ever on our own origin. The value comes from
 * a URL anyone can send (`/login?next=...`), so it is read as the browser would read a `Location`
 * header - the WHATWG URL parser, against a stand-in origin - and kept only if it stays on that
 * origin, re-serialised so that nothing the parser would have read as off-site survives: `//evil`,
 * `/\evil`, `https://evil`, tabs and newlines (which the parser drops), dot segments that fold into
 * `//` (`/.//evil`). Percent-encoded slashes stay encoded, a path on our origin.
 */

const STAND_IN = "http://next.invalid";
/** Longer than any path of ours; a longer `next` is refused rather than parsed. */
const MAX_NEXT = 2048;
// Backslashes read as slashes; control characters are dropped or refused by the parser.
const UNSAFE = /[\\\p{Cc}]/u;

/**
 * Where to send the browser after signing in: `next` when it is a path on this app's origin (with
 * its query and fragment), re-serialised; `fallback` for anything else - another origin in any
 * spelling (`//evil.example`, `/\evil.example`, `https://evil.example`, `/%09/evil.example`, ...),
 * control characters, backslashes, something that is no string, or past 2,048 characters.
 *
 * @param next What the request asked for (`url.searchParams.get("next")`, `form.get("next")`).
 * @param fallback Where to go otherwise: `/`.
 * @returns A path that starts with exactly one `/`.
 *
 * @example
 * ```ts
 * import { safeNext } from "shell/auth";
 *
 * console.log(safeNext("/admin?tab=users")); // "/admin?tab=users"
 * console.log(safeNext("//evil.example/")); // "/"
 * console.log(safeNext("https://evil.example/", "/account")); // "/account"
 * ```
 * @see docs/users.md - Guarding a folder
 */
export function safeNext(next: unknown, fallback = "/"): string {
  if (typeof next !== "string" || !next.startsWith("/") || next.length > MAX_NEXT) return fallback;
  if (UNSAFE.test(next)) return fallback;
  const url = URL.parse(next, STAND_IN);
  if (!url || url.origin !== STAND_IN) return fallback;
  const path = url.pathname + url.search + url.hash;
  return path.startsWith("/") && !/^\/[/\\]/.test(path) ? path : fallback;
}
