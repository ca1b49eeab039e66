/**
 * @module
 * For islands: `recover(action, onRefusal)` is a server action for `useActionState` whose
 * refusals become state instead of errors — a 429 becomes "please wait" in the form, where the
 * bare action would reject and end on the failure screen. `onRefusal` gets the error and the
 * call's arguments (the previous state first); what it returns is the new state, and when it
 * returns `undefined` the error is thrown as before. On the server it is still the action as React knows it (its form
 * fields and signature), so the form keeps posting to the action with JavaScript off.
 * Browser-safe: islands import it.
 */

/** A server action as `useActionState` calls it: the previous state first. */
export type StateAction<S, A extends unknown[]> = (previous: S, ...args: A) => Promise<S>;
type AnyAction = (...args: unknown[]) => Promise<unknown>;

/**
 * The HTTP status of a failed action call (an `ActionError` from the stub), if it is one.
 *
 * @example
 * ```ts
 * import { actionStatus } from "../lib/runtime.ts";
 *
 * export const isRateLimited = (error: unknown) => actionStatus(error) === 429;
 * ```
 */
export function actionStatus(error: unknown): number | undefined {
  const { name, status } = (error ?? {}) as { name?: unknown; status?: unknown };
  return name === "ActionError" && typeof status === "number" ? status : undefined;
}

/**
 * A server action for `useActionState` whose refusals become state: when a call rejects,
 * `onRefusal(error, previous, ...args)` returns the new state, or `undefined` to throw the error as
 * before. The form still posts to the action itself with JavaScript off.
 *
 * @param action A server action taking the previous state first.
 * @param onRefusal Turns a rejected call into state, or returns `undefined`.
 * @example
 * ```ts
 * import { actionStatus, recover } from "../lib/runtime.ts";
 *
 * type State = { saved?: boolean; wait?: string };
 * declare function save(previous: State, form: FormData): Promise<State>;
 *
 * export const saveOrWait = recover(save, (error) =>
 *   actionStatus(error) === 429 ? { wait: "Please wait a minute." } : undefined
 * );
 * ```
 */
export function recover<S, A extends unknown[]>(
  action: StateAction<S, A>,
  onRefusal: (error: unknown, previous: S, ...args: A) => S | undefined,
): StateAction<S, A> {
  return recovering(action as AnyAction, onRefusal as Refusal, []) as StateAction<S, A>;
}

type Refusal = (error: unknown, ...args: unknown[]) => unknown;

function recovering(
  action: AnyAction,
  onRefusal: Refusal,
  bound: unknown[],
): AnyAction {
  const call = async (...args: unknown[]) => {
    try {
      return await action(...args);
    } catch (error) {
      const state = onRefusal(error, ...bound, ...args);
      if (state === undefined) throw error;
      return state;
    }
  };
  // React renders a form's `action` from these, matches a posted form's state with them, and binds
  // the previous state: on the server, a registered action has them (`actions/registry.ts`) — from
  // when the app registers it, after this module ran, so they are read when React asks.
  const form = action as AnyAction & Record<string, unknown>;
  return Object.defineProperties(call, {
    $$FORM_ACTION: { get: () => form.$$FORM_ACTION },
    $$IS_SIGNATURE_EQUAL: { get: () => form.$$IS_SIGNATURE_EQUAL },
    bind: {
      value: (thisArg: unknown, ...args: unknown[]) =>
        recovering(action.bind(thisArg, ...args), onRefusal, [...bound, ...args]),
    },
  });
}
