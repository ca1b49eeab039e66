/**
 * @module
 * The browser side of server actions: posts a call's arguments to the action and resolves with
 * what it returned. A refused call rejects with an `ActionError` carrying the status and the
 * message the server sent (an `httpError`'s); a failed one with only the failure's digest, which,
 * left uncaught, ends on the server-side failure screen. A call the server's build cannot answer -
 * the action is gone since the page was loaded (410, `App-Stale`) - reloads the page to the new
 * version, keeping what the user typed (`stale.ts`); every answer says which build gave it, which
 * the tab notes (`versions.ts`). A call with a form among its arguments carries a submission key
 * and is sent again, with that key, when its connection drops (`once.ts`). The build bundles this
 * module on its own and the stubs (`actions.ts`) import it at the first call, so it loads,
 * devalue's stringify with it, only when an action runs. It shares no module instance with the
 * islands' chunks: what it needs from their state (the trace headers) comes in as an argument.
 */
import { ActionError } from "../shared/action_error.ts";
import { actionUrl, decodeResult, encodeCall, REDIRECT_HEADER } from "../shared/action_wire.ts";
import { BUILD_HEADER, STALE_HEADER } from "../shared/versions.ts";
import { reloadKeepingInput, withUnkeptMarks } from "./stale.ts";
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
  // A call that carries a form is a submission: its key makes it happen once on the server, so a
  // call whose connection dropped is sent again, with the same key, and never runs twice.
  const once = args.some((arg) => arg instanceof FormData) ? submissionKey() : undefined;
  const body = encodeCall(
    once ? args.map((arg) => arg instanceof FormData ? withUnkeptMarks(arg) : arg) : args,
    once,
  );
  // A failure then comes back as its digest in JSON, whatever failed (see the endpoint).
  const init = { method: "POST", body, headers: { ...headers, Accept: "application/json" } };
  const response = await (once ? sentAgainOnDrop(actionUrl(id), init) : fetch(actionUrl(id), init));
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

/** The waits before sending a submission again after its connection dropped. */
const AGAIN_MS = [300, 1_000];

async function sentAgainOnDrop(url: string, init: RequestInit): Promise<Response> {
  for (const wait of AGAIN_MS) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error; // a network error is a TypeError
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  return await fetch(url, init);
}

/** 128 random bits, base64url: `crypto.randomUUID` is missing on plain-http origins. */
function submissionKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

/**
 * What a call's response says: the action's value, or an `ActionError` thrown. Also read by the
 * test kit (`lib/testing/`), which calls actions as islands do.
 */
export async function resultOf(name: string, response: Response): Promise<unknown> {
  if (!response.ok) throw await failureOf(name, response);
  return decodeResult(await response.text());
}

/**
 * What the server said: `{"error":{status,message}}` for an expected error, a digest for a failure.
 */
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
