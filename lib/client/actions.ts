/**
 * @module
 * The browser side of server actions: what an island gets when it imports a `"use server"`
 * module (see `build/action_stubs.ts`). Each export is a function that posts its arguments to the
 * action and resolves with what the action returned. A failed action rejects with an error that
 * carries only the failure's digest; left uncaught, it ends on the server-side failure screen.
 */
import { actionUrl, decodeResult, encodeCall, REDIRECT_HEADER } from "../actions/wire.ts";
import { pageTraceHeaders } from "./trace.ts";

/** A server action that failed: `digest` names the failure in the server's logs. */
export class ActionError extends Error {
  readonly digest?: string;

  constructor(name: string, status: number, digest?: string, details?: string) {
    const why = digest ? `Digest: ${digest}` : `HTTP ${status}`;
    super(`Server action ${name} failed. ${why}${details ? `\n\n${details}` : ""}`);
    this.name = "ActionError";
    this.digest = digest;
  }
}

export function serverAction(id: string, name: string): (...args: unknown[]) => Promise<unknown> {
  const url = actionUrl(id);
  const call = async (...args: unknown[]) => {
    const response = await fetch(url, {
      method: "POST",
      body: encodeCall(args),
      headers: pageTraceHeaders(),
    });
    const redirect = response.headers.get(REDIRECT_HEADER);
    if (redirect) {
      location.assign(redirect);
      // The page is going away: callers (a pending `useActionState`) wait for the navigation.
      return new Promise<never>(() => {});
    }
    if (!response.ok) throw await failureOf(name, response);
    return decodeResult(await response.text());
  };
  return Object.defineProperty(call, "name", { value: name });
}

async function failureOf(name: string, response: Response): Promise<ActionError> {
  const body = await response.json().catch(() => ({})) as { digest?: string; details?: string };
  return new ActionError(name, response.status, body.digest, body.details);
}
