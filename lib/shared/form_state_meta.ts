/**
 * @module
 * The `<meta>` by which a page rendered after a form post hands React's form state (what the
 * action returned, for the form's `useActionState`) to `hydrateRoot`. Its own module: the island
 * runtime needs the name, not the rest of the action wire format (nor `devalue.stringify`).
 */
export const FORM_STATE_META = "app-form-state";
