/**
 * @module
 * What the user typed, kept across a reload when a deploy made the page out of date (an action
 * it calls is gone): the named fields' values, in order, as a form sends them. The server carries
 * them in the form-state cookie and the JSX runtime puts them back into the page's fields of the
 * same names (`jsx/kept_field.ts`); with JavaScript, the browser also keeps them in the tab's
 * `sessionStorage` (`client/stale.ts`). Never the framework's own fields, files, or a sensitive
 * field (`isKeepable`, `isSensitiveField`): a credential, a one-time code, a card's number or code,
 * a bank account - whose value must outlive the page in no cookie and no storage. Browser-safe.
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

/**
 * Words of a field's name that mark a value never to be kept in a cookie or in storage, whatever
 * the field's type: credentials, one-time codes, a card's number and security code, a bank
 * account, an identity number. Matched against the name's words and runs of two or three words
 * (`new_pin`, `userPIN`, `card[number]`, `IBAN`, `one-time-code` - the `autocomplete` token's own
 * name), never inside a word: `shipping` holds no `pin`, `footprint` no `otp`, `passenger` no
 * `pass`, and a `one_time_purchase` is no code.
 */
const SENSITIVE_WORDS = new Set([
  "password",
  "passwd",
  "pwd",
  "pw",
  "pass",
  "passcode",
  "passphrase",
  "secret",
  "token",
  "csrf",
  "xsrf",
  "otp",
  "totp",
  "mfa",
  "2fa",
  "onetimecode",
  "verificationcode",
  "authcode",
  "recoverycode",
  "backupcode",
  "privatekey",
  "pin",
  "pincode",
  "tan",
  "cvc",
  "cvv",
  "csc",
  "cardnumber",
  "cardnum",
  "cardno",
  "ccnumber",
  "ccnum",
  "securitycode",
  "iban",
  "ssn",
  "apikey",
]);

/**
 * `autocomplete` tokens of fields never kept (the HTML standard's names): a browser itself keeps
 * such values out of its form history, and so does the shell.
 */
const SENSITIVE_AUTOCOMPLETE = new Set([
  "current-password",
  "new-password",
  "one-time-code",
  "cc-number",
  "cc-csc",
]);

/**
 * A product's own opt-out: a field with `data-app-keep="off"` is never kept (an IBAN named
 * `account`).
 */
export const KEEP_ATTRIBUTE = "data-app-keep";

/**
 * A hidden field the server renders just before each field never kept for its attributes, holding
 * its name: a form posted without JavaScript carries names and values only, and this is how the
 * server then knows which to leave out of the form-state cookie (`keptFromForm`). React skips
 * hidden inputs as it hydrates inside an element; the boot runtime moves those at an island's root
 * out of it first (`client/boot.ts`).
 */
export const UNKEPT_FIELD = `${FRAMEWORK_FIELD}UNKEPT`;

/** Whether a field of this name must never be kept: see `SENSITIVE_WORDS`. */
function isSensitiveName(name: string): boolean {
  // `userPIN`, and an acronym before a word: `OTPCode`, `CVVNumber`.
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/([A-Z])([A-Z][a-z])/g, "$1 $2")
    .toLowerCase().split(/[^a-z0-9]+/)
    .map((word) => word.replace(/\d+$/, ""));
  return words.some((word, i) => {
    const two = word + (words[i + 1] ?? "");
    return SENSITIVE_WORDS.has(word) || SENSITIVE_WORDS.has(two) ||
      SENSITIVE_WORDS.has(two + (words[i + 2] ?? ""));
  });
}

/**
 * Whether a field with these attributes must never be kept, whatever its name: an `autocomplete`
 * token above, or `data-app-keep="off"`.
 */
export function isSensitiveField(autocomplete: unknown, keep: unknown): boolean {
  if (typeof keep === "string" && keep.toLowerCase() === "off") return true;
  return typeof autocomplete === "string" &&
    autocomplete.toLowerCase().split(/\s+/).some((token) => SENSITIVE_AUTOCOMPLETE.has(token));
}

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
    !isSensitiveName(name);
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

/**
 * The keepable text fields of `form`, at most `MAX_KEPT_FIELDS`; none named in `unkept` (what the
 * page's `UNKEPT_FIELD`s said).
 */
export function keptFromForm(form: FormData, unkept: readonly string[] = []): KeptInput {
  // A client may send as many marks as fields (10,000): a list searched for each field would cost
  // a request 50-90 ms of CPU (measured, 500 fields and 5,000-9,500 marks).
  const never = new Set(unkept);
  const kept: KeptInput = [];
  for (const [name, value] of form) {
    if (kept.length >= MAX_KEPT_FIELDS) break;
    if (typeof value === "string" && isKeepable(name) && !never.has(name)) {
      kept.push([name, value]);
    }
  }
  return kept;
}
