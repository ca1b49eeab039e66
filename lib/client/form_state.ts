/**
 * @module
 * The form state of a page rendered after a form was posted with JavaScript off (see
 * `actions/form_state.ts`): every island's `hydrateRoot` gets it, so a form's `useActionState`
 * hydrates with the state the server rendered it with.
 */
import type { ReactFormState } from "react-dom/client";
import { parse } from "devalue";
import { FORM_STATE_META } from "../shared/form_state_meta.ts";

let state: ReactFormState | null | undefined;

export function pageFormState(): ReactFormState | null {
  if (state === undefined) {
    const meta = document.querySelector<HTMLMetaElement>(`meta[name="${FORM_STATE_META}"]`);
    state = meta ? parse(meta.content) : null;
  }
  return state ?? null;
}
