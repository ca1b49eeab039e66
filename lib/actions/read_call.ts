/**
 * @module
 * Reading an action call's body within every limit, for the endpoint (`endpoint.ts`) and for the
 * answer to a call of an action that is gone (`stale.ts`): the endpoint's body limit (413), the
 * app's body budget for what the call may hold once decoded, counted before the body is read and
 * again once it is (503), and the caps of `limits.ts` as it decodes (400, and a warning in the log:
 * a client's mistake).
 */
import type { Context } from "hono";
import { bodyRefusal, holdBytes, limitBody, reserveBytes } from "../server/bodies.ts";
import { internalsOf } from "../server/internals.ts";
import { scopeOf } from "../server/scope.ts";
import { decodeInvocation, type Invocation, mostBytes } from "./decode.ts";
import { PayloadRejected } from "./rejected.ts";
import { readForm } from "./form_body.ts";
import { ACTION_LIMITS } from "./limits.ts";
import { runsPerPost, submissionId } from "./once.ts";
import { tokenOf } from "../auth/cookie.ts";
import { authSettings } from "../auth/settings.ts";

/** The call `c` carries, or the response that refuses it. */
export async function readCall(c: Context, maxBytes: number): Promise<Invocation | Response> {
  const limited = limitBody(c, maxBytes);
  if (limited) return limited;
  // What the call may hold once decoded - the most its body's size allows - is counted before
  // the body is read: a call the budget cannot take is refused (503) before any work on it. (A
  // body of unknown length is counted as it arrives, and its real figure once decoded.)
  const declared = Number(c.req.header("content-length"));
  const most = mostBytes(Math.min(declared >= 0 ? declared : 0, maxBytes));
  const busy = reserveBytes(c, most);
  if (busy) return busy;
  let invocation: Invocation;
  try {
    // A `_middleware` may have parsed the form already (Hono keeps it): counted after, then.
    const body = c.req.raw.bodyUsed
      ? await c.req.formData()
      : await readForm(c.req.raw, ACTION_LIMITS.fields);
    invocation = decodeInvocation(body);
    // A key is of no use to an action that runs per post (nor to one the build no longer has).
    const action = internalsOf(c).action?.action;
    if (invocation.once) {
      invocation.once = action && !runsPerPost(action)
        ? await submissionId(invocation.once, body, askerOf(c))
        : undefined;
    }
  } catch (error) {
    return bodyRefusal(c) ?? badRequest(c, error);
  }
  // Then the figure for what was decoded, which the budget may still refuse.
  const full = holdBytes(c, declared >= 0 ? Math.min(invocation.bytes, most) : invocation.bytes);
  return full ?? invocation;
}

/**
 * A body that cannot be read, or that the decoder refused: logged as a warning (ten a second at
 * most, `request_log.ts`), no digest.
 */
function badRequest(c: Context, error: unknown): Response {
  if (!(error instanceof PayloadRejected)) {
    return c.text("Bad Request: the payload cannot be decoded", 400);
  }
  scopeOf(c).refusals("call refused", `action call refused: ${error.message}`, {
    action: c.req.param("id")?.slice(0, 64) ?? null,
    cap: error.cap ?? null,
    request_id: internalsOf(c).requestId ?? null,
  });
  return c.text(`Bad Request: ${error.message}`, 400);
}

/**
 * Who sends a submission, as its request says it without a KV read: the session's token
 * (`shell/auth`'s cookie) and the `Authorization` header (`hono/basic-auth`, a bearer token). Both
 * stay the same across one user's repeats - a sign-in's new token comes with cookies set, and its
 * outcome is not repeated anyway.
 */
function askerOf(c: Context): string {
  const asker = `${tokenOf(c, authSettings(c)) ?? ""}\0${c.req.header("authorization") ?? ""}`;
  return asker === "\0" ? "" : asker; // nobody's: `submissionId`'s default
}
