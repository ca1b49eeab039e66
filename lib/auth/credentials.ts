/**
 * @module
 * What a sign-up or sign-in form sends, checked before anything costs: the email normalised (trim,
 * Unicode NFC, lower case) and refused past 254 characters, without the shape of an address, or
 * with a lone surrogate or a bidi control; the
 * password 8 to 1,000 characters (NIST SP 800-63B: at least 8, and long passphrases welcome, but
 * not megabytes to hash). A value that is not a string (a file, nothing) is refused as empty. What
 * is wrong comes back field by field, for the form to show.
 */

/** The longest address SMTP can deliver to (RFC 5321: a 256-octet path, less its brackets). */
const MAX_EMAIL = 254;
const MIN_PASSWORD = 8;
const MAX_PASSWORD = 1000;

/**
 * Bidi embeddings, overrides and isolates: they turn the text after them around, so an address or a
 * name holding one reads as another ("ada@\u202Emoc.elpmaxe" shows "ada@example.com"), and one
 * left open turns the page's text beside it. No address holds one (IDNA refuses them).
 */
export const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u;

// One `@`, something on both sides, a dot in the domain, no spaces or control characters. Whether
// an address exists only mail can tell; this refuses what is plainly not one.
const EMAIL = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;

/**
 * The email address as the app stores and compares it, or `undefined` when it is none.
 *
 * @example
 * ```ts
 * import { normalizeEmail } from "shell/auth";
 *
 * console.log(normalizeEmail("  Ada@Example.COM ")); // "ada@example.com"
 * console.log(normalizeEmail("not an address")); // undefined
 * ```
 * @see docs/users.md - Emails and passwords
 */
export function normalizeEmail(email: unknown): string | undefined {
  if (typeof email !== "string" || email.length > 4 * MAX_EMAIL) return undefined;
  // Composed after lowercasing: lowercasing a composed string may leave one that composes further
  // ("\u0386\u0345" gives "\u03ac\u0345", which NFC makes "\u1fb4"), and then one address had two
  // spellings - two accounts, and a stored email that, typed back, named no user.
  const normal = email.trim().toLowerCase().normalize("NFC");
  // Well formed: KV keys a lone surrogate as U+FFFD, so two such addresses shared one key.
  return normal.length <= MAX_EMAIL && EMAIL.test(normal) && normal.isWellFormed() &&
      !BIDI_CONTROL.test(normal)
    ? normal
    : undefined;
}

/**
 * What is wrong with the fields of a sign-up or sign-in form, by field (`email`, `password`), or
 * for the form as a whole (`form`: a wrong email or password).
 *
 * @example
 * ```ts
 * import type { CredentialErrors } from "shell/auth";
 *
 * const shown: CredentialErrors = { email: "Enter an email address." };
 * ```
 * @see docs/users.md - Signing up and in
 */
export interface CredentialErrors {
  /** Beside the email field: missing, not an address, taken (sign-up). */
  email?: string;
  /** Beside the password field: missing, too short (sign-up), too long. */
  password?: string;
  /** For the whole form: a wrong email or password. */
  form?: string;
}

export interface Credentials {
  email: string;
  password: string;
}

export type Checked = { ok: true; credentials: Credentials } | {
  ok: false;
  errors: CredentialErrors;
};

/** The fields as sent (`form.get("email")`), checked; `newPassword` adds the rules of sign-up. */
export function checkCredentials(
  fields: { email: unknown; password: unknown },
  newPassword: boolean,
): Checked {
  const errors: CredentialErrors = {};
  const email = normalizeEmail(fields.email);
  if (email === undefined) {
    errors.email = typeof fields.email === "string" && fields.email.trim()
      ? "That is not an email address."
      : "Enter your email address.";
  }
  const password = typeof fields.password === "string" ? fields.password : "";
  if (!password) errors.password = "Enter your password.";
  else if (password.length > MAX_PASSWORD) {
    errors.password = `${MAX_PASSWORD} characters at most.`;
  } else if (newPassword && [...password].length < MIN_PASSWORD) {
    errors.password = `${MIN_PASSWORD} characters at least.`;
  }
  if (email === undefined || errors.password) return { ok: false, errors };
  return { ok: true, credentials: { email, password } };
}
