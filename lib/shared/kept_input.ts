/**
 * @module
 * What the user typed, kept across a reload when a deploy made the page out of date (an action
 * it calls is gone): the named fields' values, in order, as a form sends them. The server carries
 * them in the form-state cookie and the JSX runtime puts them back into the page's fields of the
 * same names (`jsx/kept_field.ts`); with JavaScript, the browser also keeps them in the tab's
 * `sessionStorage` (`client/stale.ts`). Never the framework's own fields, files, or a field whose
 * name looks like a credential. Browser-safe.
 */
import { FRAMEWORK_FIELD } from "./framework_fields.ts";

/** Field name -> value pairs, in the order the form had them. */
export type KeptInput = [name: string, value: string][];

/**
 * The one sentence a page shows when it reloaded because it was out of date and an action the user
 * asked for did not run: why, and what to do (what was typed is back in the fields).
 */
export const STALE_NOTICE =
  "This page was updated while you had it open: check what you entered and send it again.";

/**
 * The sentence instead when an island of the out-of-date page broke on what the new server sent
 * (an action's answer, live data): what the user did may have run, so never "send it again".
 */
export const RELOADED_NOTICE =
  "This page was updated while you had it open: check that what you did last took effect.";

/** Marks the notice, so that the browser does not show it a second time. */
export const NOTICE_ATTRIBUTE = "data-app-notice";

/** Names of what must never be kept in a cookie or in storage, whatever the field's type. */
const SECRET_NAME = /pass(word|wd)?|secret|token|csrf|otp|cvc|cvv|card.?num/i;

/** Types of `<input>` whose values are never kept: secrets, files, and what the page set itself. */
const NOT_KEPT_TYPES = new Set([
  "password",
  "file",
  "hidden",
  "submit",
  "button",
  "image",
  "reset",
]);

/** Whether an `<input>` of this type (lower case; `text` when none) may get a kept value. */
export function isKeptType(type: string): boolean {
  return !NOT_KEPT_TYPES.has(type);
}

/** Most fields kept: a form has tens, a large one a few hundred. */
export const MAX_KEPT_FIELDS = 500;

/** Longest field name kept: real ones are words. */
const MAX_NAME = 100;

/** Whether a field of this name may be kept. */
export function isKeepable(name: string): boolean {
  return name !== "" && name.length <= MAX_NAME && !name.startsWith(FRAMEWORK_FIELD) &&
    !SECRET_NAME.test(name);
}

/** The values of each name, in order. */
export function keptByName(kept: KeptInput): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const [name, value] of kept) {
    const values = byName.get(name);
    if (values) values.push(value);
    else byName.set(name, [value]);
  }
  return byName;
}

/** The keepable text fields of `form`, at most `MAX_KEPT_FIELDS`. */
export function keptFromForm(form: FormData): KeptInput {
  const kept: KeptInput = [];
  for (const [name, value] of form) {
    if (kept.length >= MAX_KEPT_FIELDS) break;
    if (typeof value === "string" && isKeepable(name)) kept.push([name, value]);
  }
  return kept;
}
