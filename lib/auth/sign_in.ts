/**
 * @module
 * Signing up and in with an email and a password, for a server action to call with the form's
 * fields. The fields are checked first (nothing costs before that); then the limits - sign-in per
 * client and per account (or, from a browser known for the account, per that browser: devices.ts),
 * sign-up per client, each exact across workers (`limitCalls`) - so a refused attempt costs no
 * hash; then the password is hashed within the app's bound on hashes at once. An unknown email
 * and a wrong password get the same answer, word for word, after the same work: an unknown email is
 * checked against a hash that matches no password, with the same parameters. Success starts a new
 * session with a new token - whatever session the request had is ended in the same commit (no
 * fixation) - sets the cookie, and makes the browser known for the account (devices.ts).
 */
import type { Context } from "hono";
import { httpError } from "../shared/http_error.ts";
import { kvOf } from "../kv/access.ts";
import { type CallLimit, limitCalls } from "../kv/rate_limit.ts";
import { limitedClient } from "../server/client.ts";
import { internalsOf } from "../server/internals.ts";
import { log } from "../server/log.ts";
import { type AnyContext, contextOf } from "../server/scope.ts";
import { markOf, setSessionCookie } from "./cookie.ts";
import { checkCredentials, type CredentialErrors } from "./credentials.ts";
import { knownDevice, rememberDevice } from "./devices.ts";
import { replaceSession, sessionOf } from "./current.ts";
import { hashPassword, needsRehash, PARAMS, verifyPassword } from "./password.ts";
import { startSession } from "./sessions.ts";
import type { RunOptions } from "./limiter.ts";
import { type AuthSettings, authSettings } from "./settings.ts";
import { beingDeleted } from "./user_deletion.ts";
import {
  checkedRoles,
  findUser,
  insertUser,
  publicUser,
  replaceHash,
  type User,
  UserExistsError,
} from "./users.ts";

/**
 * What `signIn` and `signUp` answer: the user, now signed in (the cookie is set), or what to show
 * in the form, by field.
 *
 * @example
 * ```ts
 * import type { AuthResult } from "shell/auth";
 *
 * function greeting(result: AuthResult): string {
 *   return result.ok ? `Welcome, ${result.user.name}` : result.errors.form ?? "Check the form";
 * }
 * ```
 * @see docs/users.md - Signing up and in
 */
export type AuthResult =
  | {
    /** Signed in: the cookie is set. */
    ok: true;
    /** Who. */
    user: User;
  }
  | {
    /** Not signed in. */
    ok: false;
    /** What to show in the form. */
    errors: CredentialErrors;
  };

/**
 * What a sign-in or sign-up form sends: the fields as `form.get()` gives them, checked here.
 *
 * @example
 * ```ts
 * import type { CredentialFields } from "shell/auth";
 *
 * const fromForm = (form: FormData): CredentialFields => ({
 *   email: form.get("email"),
 *   password: form.get("password"),
 * });
 * ```
 * @see docs/users.md - Signing up and in
 */
export interface CredentialFields {
  /** The `email` field: anything, checked and normalised here. */
  email: unknown;
  /** The `password` field: anything, checked here. */
  password: unknown;
}

/**
 * The one answer (`errors.form`) to an unknown email and to a wrong password.
 *
 * @example
 * ```ts
 * import { WRONG_CREDENTIALS } from "shell/auth";
 *
 * console.log(WRONG_CREDENTIALS); // "Wrong email or password."
 * ```
 * @see docs/users.md - Signing up and in
 */
export const WRONG_CREDENTIALS = "Wrong email or password.";

// Matches no password: an unknown email is checked against it, at the cost of a real check.
const NO_ONES_HASH = `$scrypt$ln=${PARAMS.ln},r=${PARAMS.r},p=${PARAMS.p}$${"A".repeat(22)}$` +
  "A".repeat(43);

/**
 * Signs in with an email and a password: on success a new session (a new token; the request's old
 * session ends) and its cookie. An unknown email and a wrong password get the same answer
 * (`errors.form`), after the same work. Past the limits - per client, and per account or per
 * browser known for it, across every worker and instance - it throws `httpError(429)` with
 * `Retry-After`; past the app's bound on password hashes at once, or when the hash could not be
 * done before the request's deadline, a 503 with `Retry-After`.
 *
 * @param from `requestContext()` in a server action (or a handler's `ctx`, a middleware's `c`).
 * @param fields The form's `email` and `password`, as sent.
 * @returns The signed-in user, or the errors to show in the form.
 *
 * @example
 * ```ts
 * // routes/_login/actions.ts
 * "use server";
 * import { redirect, requestContext } from "shell";
 * import { type CredentialErrors, safeNext, signIn } from "shell/auth";
 *
 * export async function logIn(_previous: CredentialErrors, form: FormData) {
 *   const c = requestContext();
 *   const result = await signIn(c, { email: form.get("email"), password: form.get("password") });
 *   if (!result.ok) return result.errors;
 *   redirect(safeNext(form.get("next")));
 * }
 * ```
 * @see docs/users.md - Signing up and in
 */
export async function signIn(from: AnyContext, fields: CredentialFields): Promise<AuthResult> {
  const c = contextOf(from);
  const checked = checkCredentials(fields, false);
  if (!checked.ok) return checked;
  const { email, password } = checked.credentials;
  const settings = authSettings(c);
  const kv = kvOf(c);
  await throttle(c, ["auth-sign-in-client", clientOf(c)], settings.signInPerClient);
  const user = await findUser(kv, email);
  // A browser the user signed in with lately has a limit of its own: whoever spends the account's
  // cannot lock them out of it (devices.ts).
  const device = user && await knownDevice(c, settings, user.id);
  const counted = device ? ["auth-sign-in-device", device] : ["auth-sign-in-account", email];
  await throttle(c, counted, settings.signInPerAccount);
  const hash = user?.passwordHash ?? NO_ONES_HASH;
  const right = await settings.hashing.run(() => verifyPassword(password, hash), within(c));
  if (!user || !right) return { ok: false, errors: { form: WRONG_CREDENTIALS } };
  if (needsRehash(user.passwordHash)) {
    const rehashed = await settings.hashing.run(() => hashPassword(password), within(c));
    await replaceHash(kv, user, rehashed);
  }
  const signedIn = await begin(c, settings, publicUser(user));
  // Deleted (on any worker) while the password was checked: as for an email with no account.
  if (!signedIn) return { ok: false, errors: { form: WRONG_CREDENTIALS } };
  return { ok: true, user: signedIn };
}

/**
 * Makes an account with an email and a password, and signs it in (a new session and its cookie).
 * An email with an account already gets a field error saying so. Past the sign-up limit per client
 * it throws `httpError(429)` with `Retry-After`.
 *
 * @param from `requestContext()` in a server action (or a handler's `ctx`, a middleware's `c`).
 * @param fields The form's `email` and `password`, as sent.
 * @param options `roles`: what every account made here has (a clinic's `["patient"]`), the
 * server's to say, never the form's; none unless given. Granting them after the sign-up instead
 * (`setRoles`) would end the session it just began.
 * @returns The new, signed-in user, or the errors to show in the form.
 * @throws {TypeError} When `roles` holds what is not a role's name, before any hash.
 * @throws {RangeError} When the app declares its roles (`routes/_roles.ts`) and `roles` holds
 * another, before any hash: the message names the declared ones; and for more than 500 roles.
 *
 * @example
 * ```ts
 * // routes/_signup/actions.ts
 * "use server";
 * import { redirect, requestContext } from "shell";
 * import { type CredentialErrors, signUp } from "shell/auth";
 *
 * export async function join(_previous: CredentialErrors, form: FormData) {
 *   const result = await signUp(requestContext(), {
 *     email: form.get("email"),
 *     password: form.get("password"),
 *   });
 *   if (!result.ok) return result.errors;
 *   redirect("/account");
 * }
 * ```
 * @see docs/users.md - Signing up and in
 */
export async function signUp(
  from: AnyContext,
  fields: CredentialFields,
  { roles }: { roles?: readonly string[] } = {},
): Promise<AuthResult> {
  const c = contextOf(from);
  // Before anything: a product's mistake (a role from the form), not the form's.
  const given = roles === undefined ? undefined : checkedRoles(roles, "signUp", kvOf(c));
  const checked = checkCredentials(fields, true);
  if (!checked.ok) return checked;
  const { email, password } = checked.credentials;
  const settings = authSettings(c);
  const kv = kvOf(c);
  await throttle(c, ["auth-sign-up-client", clientOf(c)], settings.signUpPerClient);
  const taken = { ok: false as const, errors: { email: "An account with this email exists." } };
  // A deletion cut short holds the email until the product's retry finishes it (docs/users.md).
  const held = async () =>
    await beingDeleted(kv, email)
      ? { ok: false as const, errors: { email: "The account with this email is being deleted." } }
      : taken;
  if (await findUser(kv, email)) return taken;
  const passwordHash = await settings.hashing.run(() => hashPassword(password), within(c));
  try {
    const user = await insertUser(kv, { email, passwordHash, roles: given });
    const signedIn = await begin(c, settings, publicUser(user));
    if (!signedIn) return { ok: false, errors: { form: "This account has been deleted." } };
    return { ok: true, user: signedIn };
  } catch (error) {
    if (error instanceof UserExistsError) return await held();
    throw error;
  }
}

/**
 * A new session for `user`, ending the request's old one in the same commit; sets the cookie.
 * Returns the user as the session holds them: their roles as they were when it began; `undefined`
 * (no session, no cookie) when the user was deleted meanwhile.
 */
async function begin(c: Context, settings: AuthSettings, user: User): Promise<User | undefined> {
  const previous = await sessionOf(c);
  const started = await startSession(kvOf(c), user, settings, previous);
  if (!started) return undefined;
  const { token, session } = started;
  setSessionCookie(c, settings, token, markOf(session.record.createdAt));
  replaceSession(c, session);
  // The session and its cookie stand: a browser left unknown only signs in on the account's limit
  // next time, where failing here would answer a signed-in user as refused.
  await rememberDevice(c, settings, user.id).catch((error) =>
    log("warn", "sign-in: the browser could not be remembered", { error: String(error) })
  );
  const { email, name, roles } = session.record;
  return { id: user.id, email, name, roles: [...roles] };
}

async function throttle(c: Context, key: string[], limit: CallLimit): Promise<void> {
  const result = await limitCalls(kvOf(c), key, limit);
  if (result.ok) return;
  const wait = result.retryAfterSeconds;
  const after = wait < 120 ? `${wait} seconds` : `${Math.ceil(wait / 60)} minutes`;
  throw httpError(429, `Too many attempts: please try again in ${after}.`, {
    headers: { "Retry-After": String(wait) },
  });
}

/** Who is asking, for the per-client limits: as `rateLimit()` counts them. */
function clientOf(c: Context): string {
  return limitedClient(c) ?? "unknown";
}

/** A hash waits for its turn only while the request can still be answered in time (503 after). */
function within(c: Context): RunOptions {
  return { by: internalsOf(c).deadline?.expiresAt };
}
