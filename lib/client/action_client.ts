/**
 * @module
 * The browser side of server actions: posts a call's arguments to the action and resolves with
 * what it returned. A refused call rejects with an `ActionError` carrying the status and the
 * message the server sent (an `httpError`'s); a failed one with only the failure's digest, which,
 * left uncaught, ends on the server-side failure screen. A call the server's build cannot answer -
 * the action is gone since the page was loaded (410, `App-Stale`) - reloads the page to the new
 * version, keeping what the user typed (`stale.ts`); every answer says which build gave it, which
 * the tab notes (`versions.ts`). The build bundles this module on its
 * own and the stubs (`actions.ts`) import it at the first call, so it loads, devalue's stringify
 * with it, only when an action runs. It shares no module instance with the islands' chunks: what it
 * needs from their state (the trace headers) comes in as an argument.
 */
import { ActionError } from "../shared/action_error.ts";
import { actionUrl, decodeResult, encodeCall, REDIRECT_HEADER } from "../shared/action_wire.ts";
import { BUILD_HEADER, STALE_HEADER } from "../shared/versions.ts";
import { reloadKeepingInput } from "./stale.ts";
import { noteServedBuild } from "./versions.ts";

// For the boot runtime, which loads this bundle to move an out-of-date page, or after it moved.
export { reloadKeepingInput, restoreKeptInput } from "./stale.ts";

/** Calls the action `id` (exported as `name`) with `args`, sending the trace `headers`. */
export async function callAction(
  id: string,
  name: string,
  args: unknown[],
  headers: Record<string, string>,
): Promise<unknown> {
  const response = await fetch(actionUrl(id), {
    method: "POST",
    body: encodeCall(args),
    // A failure then comes back as its digest in JSON, whatever failed (see the endpoint).
    headers: { ...headers, Accept: "application/json" },
  });
  noteServedBuild(response.headers.get(BUILD_HEADER));
  const redirect = response.headers.get(REDIRECT_HEADER);
  if (redirect) {
    location.assign(redirect);
    // The page is going away: callers (a pending `useActionState`) wait for the navigation.
    return new Promise<never>(() => {});
  }
  if (response.status === 410 && response.headers.get(STALE_HEADER)) {
    await response.body?.cancel();
    reloadKeepingInput({ notice: "not-run" });
    return new Promise<never>(() => {}); // as above
  }
  return await resultOf(name, response);
}

/**
 * What a call's response says: the action's value, or an `ActionError` thrown. Also read by the
 * test kit (`lib/testing/`), which calls actions as islands do.
 */
export async function resultOf(name: string, response: Response): Promise<unknown> {
  if (!response.ok) throw await failureOf(name, response);
  return decodeResult(await response.text());
}

/** What the server said: `{"error":{status,message}}` for an expected error, a digest for a failure. */
interface Refusal {
  error?: { status?: unknown; message?: unknown; stale?: unknown; code?: unknown };
  digest?: unknown;
  details?: unknown;
}

async function failureOf(action: string, response: Response): Promise<ActionError> {
  const body: Refusal = await response.json().catch(() => ({}));
  const text = (value: unknown) => typeof value === "string" ? value : undefined;
  const { status } = response;
  const expected = text(body?.error?.message);
  if (expected !== undefined) {
    const stale = body?.error?.stale === true;
    return new ActionError(status, expected, { action, stale, code: text(body?.error?.code) });
  }
  const digest = text(body?.digest);
  const why = digest ? `Digest: ${digest}` : `HTTP ${status}`;
  const details = text(body?.details); // dev only: the failure's message and stack
  const message = `Server action ${action} failed. ${why}${details ? `\n\n${details}` : ""}`;
  return new ActionError(status, message, { action, digest });
}
