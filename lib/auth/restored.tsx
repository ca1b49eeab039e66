/**
 * @module
 * The check a signed-in page makes when the browser shows it again from its back/forward cache:
 * pages that read a session are `private, no-cache`, which keeps them eligible for that cache, so
 * after "Log out" the Back button would show the signed-in page as it was, without asking. The
 * page carries its session's mark (cookie.ts) in a nonce'd inline script; restored (`pageshow`
 * with `persisted`), it compares the mark with the cookie's, and when they differ - signed out,
 * or another session since - hides itself and loads anew, which the server answers as it answers
 * anyone now. A page loaded fresh is not checked: nothing it shows is older than its request.
 */
import type { Context } from "hono";
import type { ReactElement } from "react";
import { internalsOf } from "../server/internals.ts";
import { nonceOf } from "../server/security.ts";
import { markCookie } from "./cookie.ts";
import { authSettings } from "./settings.ts";

/** The script for a page whose request found or began a session; nothing for anyone else. */
export function restoredPageCheck(c: Context): ReactElement | undefined {
  const mark = internalsOf(c).sessionMark;
  if (mark === undefined) return undefined;
  // A cookie's name and a base-36 mark: JSON, with `<` escaped, cannot leave the script.
  const expected = JSON.stringify(`${markCookie(authSettings(c))}=${mark}`).replaceAll(
    "<",
    "\\u003c",
  );
  const script = `addEventListener("pageshow",function(e){if(e.persisted&&` +
    `!document.cookie.split("; ").includes(${expected})){` +
    `document.documentElement.hidden=true;location.reload()}})`;
  return <script nonce={nonceOf(c)} dangerouslySetInnerHTML={{ __html: script }} />;
}
