/**
 * @module
 * `ActionError`: how a server action call that did not succeed rejects in the browser. Its
 * `status` is the HTTP status; for an expected error (`httpError(403, "Only members...")` thrown by
 * the action or the middleware in front of it) its `message` is the thrown one, as the product
 * wrote it; for a failure it carries the `digest` of the server's log line instead. The action
 * client and the islands are separate bundles, each with its own copy of this class: `instanceof`
 * goes by the name and the status, so it holds across them. Browser-safe, and nothing in it runs
 * as the module loads, so an island that does not use it bundles none of it.
 */

/**
 * What else an `ActionError` carries, beside its status and message.
 *
 * @example
 * ```ts
 * import { ActionError } from "shell/runtime";
 *
 * const failure = new ActionError(500, "Server action sign failed.", { digest: "7KQ2M-XF9PA" });
 * ```
 * @see docs/actions.md
 */
export interface ActionErrorInit {
  /** A server failure's digest: its log line and Sentry event carry the same. */
  digest?: string;
  /** The action's export name. */
  action?: string;
  /**
   * The call came from a page older than the server's build, and the action is gone from it
   * (status 410): the page reloads itself to the new version.
   */
  stale?: boolean;
  /** The refusal's code, as the server's `httpError` gave it (`HttpErrorInit.code`). */
  code?: string;
}

/**
 * A server action call that was refused or failed. `status` is the HTTP status (403: not allowed,
 * 429: too many calls, 500: a failure); `message` the thrown `httpError`'s message, or for a
 * failure a sentence naming the action and the `digest`. Catch it around a call, or turn it into
 * state with `recover`.
 *
 * @example
 * ```tsx
 * // islands/Archive.tsx
 * import { useState } from "react";
 * import { ActionError } from "shell/runtime";
 *
 * declare function archive(id: string): Promise<void>; // a server action
 *
 * export default function Archive({ id }: { id: string }) {
 *   const [refusal, setRefusal] = useState("");
 *   const click = async () => {
 *     try {
 *       await archive(id);
 *     } catch (error) {
 *       if (error instanceof ActionError && error.status < 500) setRefusal(error.message);
 *       else throw error;
 *     }
 *   };
 *   return <p><button type="button" onClick={click}>Archive</button> {refusal}</p>;
 * }
 * ```
 */
export class ActionError extends Error {
  /** The HTTP status of the call: 4xx for a refusal, 5xx for a failure. */
  readonly status: number;
  /** A failure's digest, to find it in the server's logs; none for a refusal. */
  readonly digest?: string;
  /** The action's export name. */
  readonly action?: string;
  /** The page is older than the server's build, which no longer has the action (410). */
  readonly stale: boolean;
  /** A refusal's code from the product's error catalogue (`httpError`'s `code`); none otherwise. */
  readonly code?: string;

  /** Made by the action client from the server's answer; products only catch it. */
  constructor(status: number, message: string, init: ActionErrorInit = {}) {
    super(message);
    this.name = "ActionError";
    this.status = status;
    this.digest = init.digest;
    this.action = init.action;
    this.stale = init.stale === true;
    if (init.code !== undefined) this.code = init.code;
  }

  /** By name and status, not the prototype: the action client's copy of the class is another. */
  static override [Symbol.hasInstance](value: unknown): value is ActionError {
    return value instanceof Error && value.name === "ActionError" &&
      typeof (value as { status?: unknown }).status === "number";
  }
}
