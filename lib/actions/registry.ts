/**
 * @module
 * The server actions of a build, by id. Registering one also teaches React how to render it as a
 * form's `action` on the server: `$$FORM_ACTION` gives the real URL and method plus hidden fields
 * for arguments bound with `.bind()` (React's `useActionState` binds the previous state that way)
 * and a new submission key (`once.ts`; none for an action marked `once = false`), so the form
 * posts to the action with JavaScript off.
 * `$$IS_SIGNATURE_EQUAL` lets React match the state an action returned to a form's
 * `useActionState` when the page renders again.
 */
import { stringify } from "devalue";
import type { ActionEntry, ActionFunction } from "../server/manifest.ts";
import { actionUrl, FRAMEWORK_FIELD, ONCE_FIELD } from "../shared/action_wire.ts";
import { runsPerPost } from "./once.ts";

export type { ActionEntry, ActionFunction };

/** What React's server renderer reads from a form action (`ReactCustomFormAction`). */
export interface FormActionFields {
  name: string;
  action: string;
  method: "POST";
  encType: "multipart/form-data";
  data: FormData;
}

/** The hidden field holding a form's bound arguments, for React's per-form prefix. */
export function boundField(prefix: string): string {
  return `${FRAMEWORK_FIELD}${prefix}:bound`;
}

/** The field naming the prefix of the form that was posted. */
export const REF_FIELD = `${FRAMEWORK_FIELD}REF_`;

export type Registry = ReadonlyMap<string, ActionEntry>;

// Multipart, so that file inputs work with JavaScript off too.
const ENC = "multipart/form-data";

export function registerActions(entries: ActionEntry[]): Registry {
  const registry = new Map<string, ActionEntry>();
  for (const entry of entries) {
    if (typeof entry.action !== "function") {
      throw new TypeError(`${entry.file}: export ${entry.name} is not a function`);
    }
    registry.set(entry.id, entry);
    decorate(entry.action, entry.id, [], !runsPerPost(entry.action));
  }
  return registry;
}

function decorate(
  fn: ActionFunction,
  id: string,
  bound: unknown[],
  keyed: boolean,
): ActionFunction {
  // Configurable: a second server in the same process (tests) registers the same functions.
  return Object.defineProperties(fn, {
    $$FORM_ACTION: {
      configurable: true,
      value: (prefix: string): FormActionFields => {
        const data = new FormData();
        if (bound.length > 0) data.set(boundField(prefix), stringify(bound));
        // A new submission at each render: two posts of this one make one effect (`once.ts`).
        if (keyed) data.set(ONCE_FIELD, crypto.randomUUID());
        const url = actionUrl(id);
        return { name: REF_FIELD + prefix, action: url, method: "POST", encType: ENC, data };
      },
    },
    $$IS_SIGNATURE_EQUAL: {
      configurable: true,
      value: (referenceId: string, boundCount: number) =>
        referenceId === id && boundCount === bound.length,
    },
    bind: {
      configurable: true,
      value(this: ActionFunction, thisArg: unknown, ...args: unknown[]) {
        const fnBound = Function.prototype.bind.call(this, thisArg, ...args) as ActionFunction;
        return decorate(fnBound, id, [...bound, ...args], keyed);
      },
    },
  });
}
