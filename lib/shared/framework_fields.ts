/**
 * @module
 * The prefix of the form fields React and the framework add to a form (`$ACTION_REF_...`,
 * `$ACTION_KEY`, ...), which never reach an action nor are kept across a reload. Its own module, as
 * `form_state_meta.ts` is: the browser's reload code needs the prefix, not the action wire format
 * (nor `devalue` with it).
 */
export const FRAMEWORK_FIELD = "$ACTION_";
