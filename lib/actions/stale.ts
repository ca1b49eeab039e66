/**
 * @module
 * The answer to a call of an action this build does not have. Ids stay the same from build to
 * build (`build/actions.ts`), so such a call comes from a page loaded before a deploy that removed
 * or renamed the action (or from someone guessing). Never a bare 404 and never the failure screen:
 * the deploy is nobody's failure. Whatever the form sent comes back to its page - its fields in the
 * signed form-state cookie, which the next GET of that page puts back into its fields of the same
 * names, with one sentence saying why (`shared/kept_input.ts`):
 * - a call from an island's stub (`Accept: application/json`) gets 410 Gone with `App-Stale: 1`
 *   and `{"error":{"status":410,"message":...,"stale":true}}`: the browser reloads the page
 *   (`client/stale.ts`);
 * - a form posted with JavaScript off gets a 303 back to its page, as after any form action.
 * The body is read within the limits of any call (`read_call.ts`); no middleware runs, since no
 * action's folder is known, and nothing runs but this.
 */
import type { Context } from "hono";
import { internalsOf } from "../server/internals.ts";
import { scopeOf } from "../server/scope.ts";
import { keptFromForm, type KeptInput, MAX_KEPT_FIELDS } from "../shared/kept_input.ts";
import { STALE_HEADER } from "../shared/versions.ts";
import { formPage } from "../server/form_page.ts";
import { flashFormState, type Secret } from "./form_state.ts";
import { readCall } from "./read_call.ts";

export interface StaleOptions {
  /** Signs the cookie that carries the fields back. */
  secret: Secret;
  /** Largest request body, in bytes. */
  maxBytes: number;
  /** The app's public origins; unset, the request's own. */
  origins?: string[];
}

/** What an island's call rejects with (`ActionError.message`) if it catches it. */
const STALE_MESSAGE = "This page is out of date: reload it to get the new version.";

/** The answer to a call of the unknown action `c.req.param("id")`. */
export async function staleCall(c: Context, options: StaleOptions): Promise<Response> {
  const call = await readCall(c, options.maxBytes);
  if (call instanceof Response) return call;
  const fromStub = call.form === undefined;
  // Any client can post to an id no build has: ten lines a second at most (`request_log.ts`).
  scopeOf(c).refusals(
    "stale call",
    "a call to an action this build does not have: the page is older than the build",
    {
      action: c.req.param("id")!.slice(0, 64),
      from: fromStub ? "island" : "form",
      request_id: internalsOf(c).requestId ?? null,
    },
    "info",
  );
  const page = formPage(c, options.origins);
  const kept: KeptInput = call.args.filter((arg) => arg instanceof FormData)
    .flatMap((form) => keptFromForm(form, call.unkept)).slice(0, MAX_KEPT_FIELDS);
  await flashFormState(c, options.secret, page.pathname, { kept }, page.secure);
  if (!fromStub) return c.redirect(page.pathname + page.search, 303);
  return c.json(
    { error: { status: 410, message: STALE_MESSAGE, stale: true } },
    410,
    { [STALE_HEADER]: "1" },
  );
}
