/**
 * @module
 * Request bodies on a budget. A body's bytes count against one budget shared by every request of
 * the app from the moment they are read until the request is answered - also once the whole body
 * is in, since whatever read it still holds it (an envelope the Sentry tunnel is still
 * forwarding, a form an action is still working on); what a body became can be counted beside it
 * (`holdBytes`: a server action's decoded arguments). A body that would go past the budget is
 * refused with 503 and `Retry-After`, before it is buffered; one larger than all of it, with 413. A
 * body still arriving when the request's deadline passes is cut off with 408 and `Connection:
 * close`. A route can set a limit of its own (`limitBody`): past it, 413. So slow, stalled,
 * oversized or waiting uploads hold neither memory nor a handler for long. (The socket is Deno's:
 * it stays open until the client has sent what it announced or goes away, whatever the response
 * says; a reverse proxy's body timeout is what closes it. See docs/deploying.md.) Requests without
 * a body pass untouched.
 *
 * Whatever reads the body (a server action, the tunnel, a handler's `req.json()`) sees the cut as
 * a failed read; the refusal is recorded on the request, and the error handlers answer with it
 * (`bodyRefusal`) rather than with a failure: it is the client's doing, not the server's. A cut
 * cancels the read of the body, so Deno can discard the rest: a reader left holding a half-read
 * body (`hono/body-limit` does that) leaves a client that is still sending stuck.
 */
import type { Context } from "hono";
import { loggedMethod, loggedPath } from "./log.ts";
import type { Middleware } from "./types.ts";
import { internalsOf } from "./internals.ts";
import { scopeOf } from "./scope.ts";

type Refusal = 408 | 413 | 503;

declare module "./internals.ts" {
  interface Internals {
    /** Set when the request's body was refused: why, as the status to answer with. */
    bodyRefused: Refusal;
    /** The request's own limit on its body (`limitBody`). */
    bodyLimit: { declared: number; max: number };
    /** Sets what the request holds beside its body, until it is answered; false if it cannot. */
    bodyHold: { set(bytes: number): boolean; budget: number };
  }
}

const MESSAGES: Record<Refusal, string> = {
  408: "request body not received in time",
  413: "request body too large",
  503: "too many request bodies in flight",
};

const TEXTS: Record<Refusal, string> = {
  408: "Request Timeout",
  413: "Payload Too Large",
  503: "Service Unavailable",
};

/** How long a client refused for the budget is told to wait. */
const RETRY_AFTER_SECONDS = "1";

export class BodyRefused extends Error {
  constructor(readonly status: Refusal) {
    super(MESSAGES[status]);
    this.name = "BodyRefused";
  }
}

/**
 * What `guardBody` gives for a request: nothing for one without a body (nothing to do), the
 * refusal to answer with, or the function to call once the request is answered.
 */
export type BodyGuard = (c: Context) => Response | (() => void) | undefined;

/**
 * The app's guard over request bodies against one `budget` of bytes (see the module's comment):
 * the request's body swapped for a counted one, its deadline cutting it off. Called by the app's
 * request frame (`frame.ts`) after the deadline is set.
 */
export function guardBody(budget: number): BodyGuard {
  let used = 0;
  return function guardBody(c) {
    const body = c.req.raw.body;
    if (!body) return undefined;
    const declared = Number(c.req.header("content-length"));
    // Larger than the whole budget, it could never be taken: a 503 would have it retried for ever.
    if (declared > budget) return refuse(c, 413);
    if (declared > budget - used) return refuse(c, 503);

    /** Bytes of the body read so far, for the limit; `held` also counts what `holdBytes` added. */
    let received = 0;
    let held = 0;
    let counted = true;
    let ended = false;
    const uncount = () => {
      used -= held;
      held = 0;
      counted = false;
    };
    const count = (bytes: number) => {
      if (!counted) return true;
      if (bytes > 0 && used + bytes > budget) return false;
      held += bytes;
      used += bytes;
      return true;
    };
    /** What `holdBytes` counts beside the body. */
    let beside = 0;
    const hold = (bytes: number) => {
      if (!count(bytes - beside)) return false;
      beside = bytes;
      return true;
    };
    // Taken at the first read: a body nobody reads stays Deno's to discard, and a client still
    // sending one is not left waiting on a stream that nobody drains.
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    let cut: ((status: Refusal) => void) | undefined;
    const guarded = new ReadableStream<Uint8Array>({
      start(controller) {
        cut = (status) => {
          if (ended) return;
          ended = true;
          uncount();
          internalsOf(c).bodyRefused = status;
          logRefusal(c, status);
          controller.error(new BodyRefused(status));
          reader?.cancel().catch(() => {});
        };
      },
      async pull(controller) {
        try {
          const { done, value } = await (reader ??= body.getReader()).read();
          if (ended) return;
          if (done) {
            ended = true; // still counted: what read it holds it until the answer
            controller.close();
            return;
          }
          // Past the whole budget too: no retry could ever fit it.
          const limit = Math.min(internalsOf(c).bodyLimit?.max ?? Infinity, budget);
          if (received + value.byteLength > limit) return cut!(413);
          if (!count(value.byteLength)) return cut!(503);
          received += value.byteLength;
          controller.enqueue(value);
        } catch (error) {
          if (ended) return;
          ended = true;
          uncount();
          controller.error(error);
        }
      },
      cancel(reason) {
        ended = true;
        return reader?.cancel(reason);
      },
      // No read ahead: the default (1) would pull once at once, taking the body nobody asked for.
    }, { highWaterMark: 0 });
    internalsOf(c).deadline?.onExpire(() => cut!(408));
    internalsOf(c).bodyLimit = { declared, max: Infinity };
    internalsOf(c).bodyHold = { set: hold, budget };
    c.req.raw = new Request(c.req.raw, { body: guarded, duplex: "half" } as RequestInit);
    // What a handler still reads after answering (a body piped into the response) is no longer
    // counted: the budget guards what requests hold until they are answered.
    return uncount;
  };
}

/**
 * Limits this request's body to `max` bytes: a 413 now when its `Content-Length` says more (the
 * body is never read), or once more than `max` bytes arrived.
 */
export function limitBody(c: Context, max: number): Response | undefined {
  const limit = internalsOf(c).bodyLimit;
  if (!limit) return undefined; // no body
  if (limit.declared > max) return refuse(c, 413);
  limit.max = max;
  return undefined;
}

/**
 * Counts `bytes` for this request against the budget beside its body, until it is answered - what
 * the body became (a server action's decoded arguments) - in place of what an earlier call
 * counted. A 503 with `Retry-After` when the budget cannot hold more (the earlier figure stays
 * counted); undefined when it can, or when the request has no body, which nothing counts.
 */
export function holdBytes(c: Context, bytes: number): Response | undefined {
  const hold = internalsOf(c).bodyHold;
  if (!hold || hold.set(bytes)) return undefined;
  return refuse(c, 503);
}

/**
 * `holdBytes` for the most a request may come to hold, counted before any work on it, so that a
 * request the budget cannot take is refused before it costs anything. At most a quarter of the
 * budget: a worst case alone never refuses a request the budget could take once its real figure
 * is known (`holdBytes` then).
 */
export function reserveBytes(c: Context, most: number): Response | undefined {
  const hold = internalsOf(c).bodyHold;
  return hold && holdBytes(c, Math.min(most, hold.budget / 4));
}

/**
 * Middleware for a `_middleware.ts`: the folder's requests may carry at most `max` bytes of body
 * (413 past it, before the body is read when `Content-Length` says so). Unlike `hono/body-limit`,
 * a refused body is never left half-read, which would leave a client still sending it stuck.
 *
 * @param max The largest body, in bytes.
 * @returns The middleware.
 *
 * @example
 * ```ts
 * // routes/uploads/_middleware.ts
 * import { bodyLimit } from "shell";
 *
 * export const handler = bodyLimit(64 * 1024);
 * ```
 * @see docs/security.md - Request bodies
 */
export function bodyLimit(max: number): Middleware {
  return async function bodyLimit(c, next) {
    const refused = limitBody(c, max);
    if (refused) return refused;
    await next();
  };
}

/**
 * The answer to a request whose body was refused, or undefined if it was not. Both the reader and
 * the error handlers may ask (the deadline fails the handler as it cuts the body): the refusal was
 * logged once, when it happened.
 */
export function bodyRefusal(c: Context): Response | undefined {
  const status = internalsOf(c).bodyRefused;
  return status && answer(c, status);
}

function refuse(c: Context, status: Refusal): Response {
  logRefusal(c, status);
  return answer(c, status);
}

function logRefusal(c: Context, status: Refusal): void {
  scopeOf(c).refusals("body refused", new BodyRefused(status).message, {
    method: loggedMethod(c.req.method),
    path: loggedPath(c.req.path),
    status,
    request_id: internalsOf(c).requestId ?? null,
  });
}

function answer(c: Context, status: Refusal): Response {
  const headers: Record<string, string> = status === 503
    ? { "Retry-After": RETRY_AFTER_SECONDS }
    : { Connection: "close" };
  return c.text(TEXTS[status], status, headers);
}
