/**
 * @module
 * For islands: `recover(action, onRefusal)` is a server action for `useActionState` whose
 * refusals become state instead of errors - a 429 becomes "please wait" in the form, where the
 * bare action would reject and end on the failure screen. `onRefusal` gets the error and the
 * call's arguments (the previous state first); what it returns is the new state, and when it
 * returns `undefined` the error is thrown as before. On the server it is still the action as React
 * knows it (its form fields and signature), so the form keeps posting to the action with
 * JavaScript off. Browser-safe: islands import it through `shell/runtime`.
 */

/**
 * A server action as `useActionState` calls it: the previous state first, then the form's
 * arguments; it resolves with the next state.
 *
 * @example
 * ```ts
 * import type { StateAction } from "shell/runtime";
 *
 * type Counter = StateAction<{ count: number }, [FormData]>;
 * ```
 * @see docs/actions.md - Refusals as state: `recover()`
 */
export type StateAction<S, A extends unknown[]> = (previous: S, ...args: A) => Promise<S>;
type AnyAction = (...args: unknown[]) => Promise<unknown>;

/**
 * The HTTP status of a failed server action call (the `ActionError` an island's call rejects
 * with), if it is one: 429 over a rate limit, 401 or 403 from a middleware, 400 past a cap.
 *
 * @param error What the call rejected with.
 * @returns Its status, or `undefined` for anything else.
 *
 * @example
 * ```ts
 * import { actionStatus } from "shell/runtime";
 *
 * export async function tryAction(call: () => Promise<unknown>): Promise<string> {
 *   try {
 *     await call();
 *     return "done";
 *   } catch (error) {
 *     return actionStatus(error) === 429 ? "please wait" : "failed";
 *   }
 * }
 * ```
 * @see docs/actions.md - Refusals as state: `recover()`
 */
export function actionStatus(error: unknown): number | undefined {
  const { name, status } = (error ?? {}) as { name?: unknown; status?: unknown };
  return name === "ActionError" && typeof status === "number" ? status : undefined;
}

/**
 * A server action for `useActionState` whose refusals become state instead of errors: a 429
 * becomes "please wait" in the form, where the bare action would reject and end on the failure
 * screen. With JavaScript off the form still posts to the action itself.
 *
 * @param action The server action (its stub, in an island).
 * @param onRefusal Gets the error, the previous state and the call's arguments; returns the new
 * state, or `undefined` to throw the error as before.
 * @returns The action to give `useActionState`.
 *
 * @example
 * ```tsx
 * // islands/Sign.tsx
 * import { useActionState } from "react";
 * import { actionStatus, recover } from "shell/runtime";
 *
 * type State = { wait?: string };
 * declare function sign(previous: State, form: FormData): Promise<State>; // from a "use server" module
 *
 * const signOrWait = recover(sign, (error) =>
 *   actionStatus(error) === 429 ? { wait: "Please wait a minute." } : undefined
 * );
 *
 * export default function Sign() {
 *   const [state, action] = useActionState(signOrWait, {});
 *   return (
 *     <form action={action}>
 *       <button type="submit">Sign</button>
 *       {state.wait && <p role="status">{state.wait}</p>}
 *     </form>
 *   );
 * }
 * ```
 * @see docs/actions.md - Refusals as state: `recover()`
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
  // the previous state: on the server, a registered action has them (`actions/registry.ts`) - from
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
