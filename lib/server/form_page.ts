/**
 * @module
 * The page a form posted with JavaScript off was on, for the 303 back to it and for the error page
 * it gets: its `Referer`, when that is one of the app's origins.
 */
import type { Context } from "hono";

/**
 * The page the form was on, for the 303 back to it: the `Referer` when it is one of our origins,
 * the home page otherwise. Only its path and query are kept, with one leading slash, so no
 * `Referer` (`http://host//evil.example/`, `http://host/\evil.example/`) can point off-site.
 * `secure`: the page is served over HTTPS - behind a proxy, by its public origin, not our URL.
 */
export function formPage(c: Context, origins: string[] | undefined) {
  const referer = URL.parse(c.req.header("referer") ?? "");
  const ours = origins ?? [new URL(c.req.url).origin];
  const origin = referer && ours.includes(referer.origin) ? referer.origin : ours[0];
  const secure = origin.startsWith("https:");
  if (!referer || origin !== referer.origin) return { pathname: "/", search: "", secure };
  const pathname = `/${referer.pathname.replace(/^[/\\]+/, "")}`;
  return { pathname, search: referer.search, secure };
}
