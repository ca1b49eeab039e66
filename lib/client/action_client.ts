/**
 * @module
 * The browser side of server actions: posts a call's arguments to the action and resolves with
 * what it returned. A failed action rejects with an error that carries only the failure's digest;
 * left uncaught, it ends on the server-side failure screen. The build bundles this module on its
 * own and the stubs (`actions.ts`) import it at the first call, so it loads, devalue's stringify
 * with it, only when an action runs. It shares no module instance with the islands' chunks: what it
 * needs from their state (the trace headers) comes in as an argument.
 */
import { actionUrl, decodeResult, encodeCall, REDIRECT_HEADER } from "../shared/action_wire.ts";

/**
 * A server action that failed: `digest` names the failure in the server's logs; `status` is the
 * HTTP status, for an island to tell a refusal (429: wait, 401: sign in) from a failure.
 */
export class ActionError extends Error {
  readonly digest?: string;
  readonly status: number;

  constructor(name: string, status: number, digest?: string, details?: string) {
    const why = digest ? `Digest: ${digest}` : `HTTP ${status}`;
    super(`Server action ${name} failed. ${why}${details ? `\n\n${details}` : ""}`);
    this.name = "ActionError";
    this.digest = digest;
    this.status = status;
  }
}

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
  const redirect = response.headers.get(REDIRECT_HEADER);
  if (redirect) {
    location.assign(redirect);
    // The page is going away: callers (a pending `useActionState`) wait for the navigation.
    return new Promise<never>(() => {});
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

async function failureOf(name: string, response: Response): Promise<ActionError> {
  const body = await response.json().catch(() => ({})) as { digest?: string; details?: string };
  return new ActionError(name, response.status, body.digest, body.details);
}
