/**
 * @module
 * Users in Deno KV: each at `["auth", "users", id]`, found by email through
 * `["auth", "emails", email]`. Creating one commits both with a check that the email is free, so
 * two workers signing up the same address at once make one account. The password is stored only as
 * its scrypt hash (`password.ts`). Changing a user's roles ends every session of theirs in the same
 * commit: a privilege change means a new token, at their next sign-in. Every write of a user's roles
 * writes who holds each role (`user_keys.ts`, listed by `role_holders.ts`) in the same commit, so
 * the index never disagrees with the records. A user whose deletion
 * (`user_deletion.ts`) is under way has a marked record: gone to every look-up here.
 */
import { HttpError } from "../shared/http_error.ts";
import { commit, retrying } from "../kv/commit.ts";
import { keySize, MAX_SET_KEYS_BYTES } from "../kv/limits.ts";
import { BIDI_CONTROL, normalizeEmail } from "./credentials.ts";
import { hashPassword } from "./password.ts";
import { declaredRolesOf, MAX_ROLES, refuseUndeclared, ROLE_NAME } from "./role_names.ts";
import { endAllSessions, sessionsOf, withoutSessions } from "./sessions.ts";
import { EMAILS, fitting, USERS, withHolders, withoutHolders } from "./user_keys.ts";

/**
 * A user as requests see them: what `currentUser()` and `state.user` hold. Never the password.
 *
 * @example
 * ```ts
 * import type { User } from "shell/auth";
 *
 * export const isAdmin = (user: User | undefined) => user?.roles.includes("admin") ?? false;
 * ```
 * @see docs/users.md
 */
export interface User {
  /** Opaque and stable: key a product's own data by it. */
  id: string;
  /** Normalised: trimmed, NFC, lower case. */
  email: string;
  /** How the app addresses them: the part of the email before the `@` unless set. */
  name: string;
  /** What they may do, for `requireRole()`: `["admin"]`. */
  roles: readonly string[];
}

/** A user as stored. */
export interface UserRecord extends User {
  roles: string[];
  /** The scrypt PHC string. */
  passwordHash: string;
  /** When the account was made (ms since the epoch). */
  createdAt: number;
  /** Set by `deleteUser` as it begins: the user is gone to every look-up from then on. */
  deletingSince?: number;
}

/**
 * Refused: an account with the email exists already.
 *
 * @example
 * ```ts
 * import { createUser, UserExistsError } from "shell/auth";
 *
 * const kv = await Deno.openKv(":memory:");
 * await createUser(kv, { email: "ada@example.com", password: "a long passphrase" });
 * try {
 *   await createUser(kv, { email: "ADA@example.com", password: "another passphrase" });
 * } catch (error) {
 *   if (error instanceof UserExistsError) console.log(error.message);
 * }
 * ```
 * @see docs/users.md - The first admin
 */
export class UserExistsError extends Error {
  /** `"UserExistsError"`. */
  override name = "UserExistsError";
  /**
   * The error for `email`.
   *
   * @param email The normalised email.
   */
  constructor(
    /** The normalised email. */
    readonly email: string,
  ) {
    super(`An account with the email ${email} exists already`);
  }
}

/**
 * `setRoles` for an email no user has: an expected error (404), so an admin page that grants roles
 * shows the product's refusal for a typo instead of failing with a digest.
 *
 * @example
 * ```ts
 * import { setRoles, UnknownUserError } from "shell/auth";
 *
 * const kv = await Deno.openKv(":memory:");
 * try {
 *   await setRoles(kv, "nobody@example.com", ["librarian"]);
 * } catch (error) {
 *   if (error instanceof UnknownUserError) console.log(error.status, error.message); // 404 ...
 * }
 * ```
 * @see docs/users.md - Roles
 */
export class UnknownUserError extends HttpError {
  /**
   * The error for `email`.
   *
   * @param email The email as given.
   */
  constructor(
    /** The email as given. */
    readonly email: string,
  ) {
    super(404, `No user has the email ${email}`);
    this.name = "UnknownUserError";
  }
}

/**
 * The roles as given, deduplicated; a `RangeError` saying there are more than `MAX_ROLES`, before
 * any is read; a `TypeError` naming the first that is no role's name - not an array (a string
 * would be stored as its letters), not a string, or outside `ROLE_NAME`: a value from a form or a
 * JSON body that reached `signUp`, `createUser` or `setRoles` unchecked - and a `RangeError`
 * naming the first the app does not declare, when it declares its roles (`routes/_roles.ts`) for
 * `kv`.
 */
export function checkedRoles(roles: unknown, whose: string, kv: Deno.Kv): string[] {
  if (!Array.isArray(roles)) {
    throw new TypeError(`${whose}: roles must be an array of role names, not ${shown(roles)}`);
  }
  // Counted first: a list from a request is the client's, and each name costs a regex test.
  if (roles.length > MAX_ROLES) {
    // Stored, they would be KV's bare "Value too large" past about 1,000 (fewer, longer names).
    throw new RangeError(
      `${whose}: ${roles.length} roles, more than the ${MAX_ROLES} one user may hold; what a user ` +
        "may reach (teams, documents) belongs in the product's own keys, not in roles",
    );
  }
  const bad = roles.findIndex((role) => typeof role !== "string" || !ROLE_NAME.test(role));
  if (bad !== -1) {
    throw new TypeError(
      `${whose}: ${
        shown(roles[bad])
      } is not a role's name (letters, digits, _ - . and :, 64 at most, as ` +
        "requireRole() names them); a role from a form or a JSON body is the client's: check it " +
        "against the roles the app has first",
    );
  }
  refuseUndeclared(roles as string[], declaredRolesOf(kv), whose);
  return [...new Set(roles as string[])];
}

/** A value as an error shows it: JSON, clipped. */
function shown(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : String(JSON.stringify(value));
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}

/** The user with this (normalised) email, as stored; not one being deleted. */
export async function findUser(kv: Deno.Kv, email: string): Promise<UserRecord | undefined> {
  const record = (await storedEntry(kv, email))?.value;
  return record?.deletingSince === undefined ? record : undefined;
}

/** The record of the user with this (normalised) email, being deleted or not. */
export async function storedEntry(
  kv: Deno.Kv,
  email: string,
): Promise<Deno.KvEntry<UserRecord> | undefined> {
  const id = await kv.get<string>([...EMAILS, email]);
  if (id.value === null) return undefined;
  const entry = await kv.get<UserRecord>([...USERS, id.value]);
  return entry.value === null ? undefined : entry;
}

/** Stores a new user whose password is already hashed; throws `UserExistsError` if taken. */
export async function insertUser(
  kv: Deno.Kv,
  fields: { email: string; passwordHash: string; roles?: readonly string[]; name?: string },
): Promise<UserRecord> {
  const record: UserRecord = {
    id: crypto.randomUUID(),
    email: fields.email,
    // By code points: cut between a surrogate pair, an emoji left the name a lone half of it.
    name: fields.name ??
      [...fields.email.slice(0, fields.email.indexOf("@"))].slice(0, 40).join(""),
    roles: [...new Set(fields.roles ?? [])],
    passwordHash: fields.passwordHash,
    createdAt: Date.now(),
  };
  const emailKey = [...EMAILS, record.email];
  const key = [...USERS, record.id];
  // The roles whose entries fit in the commit beside the record; any others are given after it.
  const first = fitting(record, record.roles, MAX_MUTATIONS - 2, setRoom(emailKey, key));
  const created = await retrying("create a user", async (commit) => {
    const result = await commit(
      withHolders(
        kv.atomic()
          .check({ key: emailKey, versionstamp: null })
          .set(emailKey, record.id)
          .set(key, { ...record, roles: first }),
        record,
        first,
      ),
    );
    if (result.ok) return record;
    // Lost to another commit: the email was taken meanwhile, or another worker held the file.
    if ((await kv.get(emailKey)).value !== null) throw new UserExistsError(record.email);
    return undefined;
  });
  if (first.length < record.roles.length) await setRoles(kv, record.email, record.roles);
  return created;
}

/** The bytes of keys a commit that sets `keys` may still set: KV's 80 KiB, less theirs. */
function setRoom(...keys: Deno.KvKey[]): number {
  return keys.reduce((room, key) => room - keySize(key), MAX_SET_KEYS_BYTES);
}

/** Stores a new hash for the user (a sign-in found theirs made with older parameters). */
export async function replaceHash(kv: Deno.Kv, user: UserRecord, passwordHash: string) {
  const key = [...USERS, user.id];
  const entry = await kv.get<UserRecord>(key);
  if (entry.value) {
    await commit(kv.atomic().check(entry).set(key, { ...entry.value, passwordHash }));
  }
}

/** The user as requests see them: no hash. */
export function publicUser({ id, email, name, roles }: User): User {
  return { id, email, name, roles: [...roles] };
}

/**
 * What `createUser` takes: an email, a password, and optionally roles (`R`: the declared ones, with
 * `roles.createUser` of `routes/_roles.ts`) and a name.
 *
 * @example
 * ```ts
 * import type { NewUser } from "shell/auth";
 *
 * const seed: NewUser<"admin" | "clerk"> = { email: "ada@example.com", password: "a passphrase" };
 * ```
 * @see docs/users.md - The first admin
 */
export interface NewUser<R extends string = string> {
  /** The email, normalised here. */
  email: string;
  /** The password, hashed here as sign-up hashes it. */
  password: string;
  /** Their roles (none unless given). */
  roles?: readonly R[];
  /** A name to show: 1 to 200 characters, no control characters (default: the email's local part). */
  name?: string;
}

/**
 * Creates a user with a password: for scripts, seeds and tests (`deno task users:add` uses it).
 * The email is normalised; the password is hashed as sign-up hashes it.
 *
 * @param kv The store (`kvOf(ctx)` in a request; `Deno.openKv()` in a script).
 * @param fields The email, the password, and optionally roles and a name.
 * @returns The new user.
 * @throws {UserExistsError} When the email has an account.
 * @throws {RangeError} When the email is not an address or the password is empty.
 * @throws {RangeError} When the name is blank, past 200 characters, or holds a control character,
 * a bidi control or a lone surrogate ({@link TypeError} when it is not a string).
 * @throws {TypeError} When a role is not a role's name (letters, digits, `_ - . :`, 64 at most).
 * @throws {RangeError} When the app declares its roles (`routes/_roles.ts`) for `kv` and a role is
 * not one of them: the message names the declared ones; and when there are more than 500 roles.
 *
 * @example
 * ```ts
 * import { createUser } from "shell/auth";
 *
 * const kv = await Deno.openKv(":memory:");
 * const admin = await createUser(kv, {
 *   email: "admin@example.com",
 *   password: "correct horse battery staple",
 *   roles: ["admin"],
 * });
 * console.log(admin.id, admin.roles);
 * ```
 * @see docs/users.md - The first admin
 */
export async function createUser(kv: Deno.Kv, fields: NewUser): Promise<User> {
  const email = normalizeEmail(fields.email);
  if (email === undefined) throw new RangeError(`Not an email address: ${fields.email}`);
  if (!fields.password) throw new RangeError("The password is empty");
  const roles = checkedRoles(fields.roles ?? [], "createUser", kv);
  const name = fields.name === undefined ? undefined : checkedName(fields.name, "createUser");
  const record = await insertUser(kv, {
    email,
    name,
    roles,
    passwordHash: await hashPassword(fields.password),
  });
  return publicUser(record);
}

/** The longest name a user is shown by. */
const MAX_NAME = 200;
/** What shows: not only spaces and format characters (a zero-width space is blank too). */
const VISIBLE = /[^\s\p{Cf}]/u;

/**
 * `name` if it can be shown as one: a string of 1 to 200 characters, not blank, without control
 * characters, bidi controls or lone surrogates (KV keys the role index by it, and stores those as
 * U+FFFD).
 */
function checkedName(name: unknown, whose: string): string {
  if (typeof name !== "string") {
    throw new TypeError(`${whose}: name must be a string, not ${typeof name}`);
  }
  if (
    name.length > MAX_NAME || !VISIBLE.test(name) || /\p{Cc}/u.test(name) ||
    BIDI_CONTROL.test(name) || !name.isWellFormed()
  ) {
    throw new RangeError(
      `${whose}: name must be 1 to ${MAX_NAME} characters, not blank, without control ` +
        `characters, bidi controls or lone surrogates (${name.length} given)`,
    );
  }
  return name;
}

/** Mutations KV takes in one atomic commit. */
const MAX_MUTATIONS = 1_000;

/** The shape of an id `insertUser` makes: anything else names no user, and is never a KV key. */
export const USER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The user with this id, as requests see them (no password hash), or `null`: what a product needs
 * when it keys its own data by `user.id`, as `User` advises, and must show whose it is (the
 * patient's name on a receptionist's list). Anything that is not a user's id is `null`, never a
 * KV error, so an id from a form or a URL can be passed as it came.
 *
 * @param kv The store (`kvOf(ctx)` in a request).
 * @param id A `User`'s `id`.
 * @returns The user, with their roles as stored; `null` when no user has the id.
 *
 * @example
 * ```ts
 * import { createUser, getUser } from "shell/auth";
 *
 * const kv = await Deno.openKv(":memory:");
 * const ada = await createUser(kv, { email: "ada@example.com", password: "a long passphrase" });
 * console.log((await getUser(kv, ada.id))?.name); // "ada"
 * console.log(await getUser(kv, "no-such-id")); // null
 * ```
 * @see docs/users.md - The user in state
 */
export async function getUser(kv: Deno.Kv, id: string): Promise<User | null> {
  if (typeof id !== "string" || !USER_ID.test(id)) return null;
  const record = (await kv.get<UserRecord>([...USERS, id])).value;
  return record && record.deletingSince === undefined ? publicUser(record) : null;
}

/**
 * Gives a user new roles, and ends every session of theirs in the same commit: a change of
 * privilege takes effect at once on every worker and instance, and they get a new token when they
 * sign in again.
 *
 * @param kv The store.
 * @param email The user's email (normalised here).
 * @param roles Their roles from now on (`[]`: none).
 * @returns The user with the new roles.
 * @throws {TypeError} When `roles` is not an array of role names (letters, digits, `_ - . :`,
 * 64 at most): one from a form or a JSON body, unchecked.
 * @throws {RangeError} When the app declares its roles (`routes/_roles.ts`) for `kv` and a role is
 * not one of them - one the user held before it was dropped from the declaration too: the message
 * names the declared ones; and when there are more than 500 roles.
 * @throws {UnknownUserError} When no user has that email (or none with `id`): 404, the product's
 * refusal uncaught.
 * @throws {KvBusyError} When the commit lost every race, or the file stayed locked by another
 * process for seconds, as any write of `shell/data`.
 *
 * @example
 * ```ts
 * import { createUser, setRoles } from "shell/auth";
 *
 * const kv = await Deno.openKv(":memory:");
 * await createUser(kv, { email: "grace@example.com", password: "a long passphrase" });
 * const grace = await setRoles(kv, "grace@example.com", ["admin"]);
 * console.log(grace.roles); // ["admin"]
 * ```
 * @see docs/users.md - Roles
 */
export async function setRoles(
  kv: Deno.Kv,
  email: string,
  roles: readonly string[],
): Promise<User> {
  const checked = checkedRoles(roles, "setRoles", kv);
  const normal = normalizeEmail(email);
  // Like every write: a lost race reads again, and a file locked by another process is waited
  // out (commit.ts); ten attempts back to back used to throw within milliseconds of a lock.
  const updated = await retrying("change roles", async (commit) => {
    const user = normal === undefined ? undefined : await findUser(kv, normal);
    if (!user) throw new UnknownUserError(email);
    const key = [...USERS, user.id];
    const entry = await kv.get<UserRecord>(key);
    // Deleted or marked since the look-up: read again, and find no user. Written, the roles' entries
    // of a marked user outlived them (the mark's commit took them away; the last one does not).
    if (!entry.value || entry.value.deletingSince !== undefined) return undefined;
    const held = entry.value.roles;
    const removed = held.filter((role) => !checked.includes(role));
    const sessions = await sessionsOf(kv, user.id);
    // A change too big for one commit (KV takes 1,000 mutations and 80 KiB of keys set) is
    // several: the roles taken away first, as many a commit as fit (a record an older version
    // wrote may hold 1,000), then those given, as many as fit (500 roles of 64 characters for a
    // name of 40 pass the 80 KiB): in between the user holds less, not more. Every role's entry
    // is written when it fits, not only the given ones': an entry missing (a user written by a
    // version before the index) is mended by any change.
    const budget = MAX_MUTATIONS - 1 - 2 * sessions.length;
    const dropped = removed.slice(0, budget);
    const given = checked.filter((role) => !held.includes(role));
    const dropping = dropped.length < removed.length;
    const written = dropping ? [] : fitting(
      entry.value,
      [...given, ...checked.filter((role) => held.includes(role))],
      budget - dropped.length,
      setRoom(key),
    );
    const gone = new Set(dropped);
    const has = new Set([...held, ...written]);
    const roles = dropping
      ? held.filter((role) => !gone.has(role))
      : checked.filter((role) => has.has(role));
    const done = !dropping && roles.length === checked.length;
    const updated = { ...entry.value, roles };
    let op = withoutSessions(kv.atomic().check(entry).set(key, updated), user.id, sessions);
    op = withHolders(withoutHolders(op, updated, dropped), updated, written);
    return (await commit(op)).ok && done ? updated : undefined;
  });
  await endAllSessions(kv, updated.id); // any past the first batch (a user keeps few)
  return publicUser(updated);
}
