/**
 * @module
 * Deleting a user: marked first - from that commit on no sign-in anywhere starts a session for
 * them, since every session's commit checks the record, and no role lists them (their entries in
 * the role index go in that commit, or right after it for a record of more roles than one commit
 * deletes) - then their sessions ended, then the
 * record and the email removed; a deletion cut short is finished by the next call, and meanwhile
 * the user is gone to everything that looks them up (`users.ts`).
 */
import { retrying } from "../kv/commit.ts";
import { normalizeEmail } from "./credentials.ts";
import { forgetDevices } from "./devices.ts";
import { beganKey, endAllSessions } from "./sessions.ts";
import { EMAILS, USERS, withoutHolders } from "./user_keys.ts";
import { publicUser, storedEntry, UnknownUserError, type User, type UserRecord } from "./users.ts";

/** Entries of the role index one commit deletes: KV takes 1,000 mutations, the mark is one. */
const ENTRIES_A_COMMIT = 999;

/** Whether the user with this (normalised) email is being deleted: a deletion cut short. */
export async function beingDeleted(kv: Deno.Kv, email: string): Promise<boolean> {
  return (await storedEntry(kv, email))?.value.deletingSince !== undefined;
}

/**
 * A user whose deletion was cut short: marked, gone to every look-up, not removed yet.
 *
 * @example
 * ```ts
 * import type { UnfinishedDeletion } from "shell/auth";
 *
 * const line = ({ email, deletingSince }: UnfinishedDeletion) =>
 *   `${email} since ${new Date(deletingSince).toISOString()}`;
 * ```
 * @see docs/users.md - Deleting a user
 */
export interface UnfinishedDeletion {
  /** The user's id: what the product's retry passes as `id`. */
  id: string;
  /** Their email, held until the deletion finishes. */
  email: string;
  /** When `deleteUser` marked them (ms since the epoch). */
  deletingSince: number;
}

/**
 * The users whose deletion was cut short (a crash, a `KvBusyError`, an `also` that threw) and not
 * finished since: for ops, to see what the product's retries have left. It reads every user's
 * record, so it is a script's call, never a request's. Finish each with `deleteUser(kv, email,
 * { id, also })`, the product's own `also` included.
 *
 * @param kv The store (`Deno.openKv(KV_PATH)` in a script).
 * @returns Each marked user, oldest mark first.
 *
 * @example
 * ```ts
 * import { unfinishedDeletions } from "shell/auth";
 *
 * const kv = await Deno.openKv(":memory:");
 * for (const { id, email, deletingSince } of await unfinishedDeletions(kv)) {
 *   console.log(id, email, new Date(deletingSince).toISOString());
 * }
 * kv.close();
 * ```
 * @see docs/users.md - Deleting a user
 */
export async function unfinishedDeletions(kv: Deno.Kv): Promise<UnfinishedDeletion[]> {
  const marked: UnfinishedDeletion[] = [];
  for await (const { value } of kv.list<UserRecord>({ prefix: USERS })) {
    if (value.deletingSince !== undefined) {
      marked.push({ id: value.id, email: value.email, deletingSince: value.deletingSince });
    }
  }
  return marked.sort((a, b) => a.deletingSince - b.deletingSince);
}

/**
 * `deleteUser`'s options.
 *
 * @example
 * ```ts
 * import type { DeleteUserOptions } from "shell/auth";
 *
 * // The product's notes of the user go in the commit that removes them.
 * const withNotes: DeleteUserOptions = { also: (op, user) => op.delete(["notes", user.id]) };
 * ```
 * @see docs/users.md - Deleting a user
 */
export interface DeleteUserOptions {
  /**
   * The product's part of the commit that removes the user's record and email: add to `op` and
   * return it (a few deletes of its own, `jobs.add(op, ...)` for the rest). It is called again with
   * a new operation when that commit is tried again, so it only adds; a `check` of its own that
   * fails fails the deletion's commit, which is retried, then ends in a `KvBusyError`.
   */
  also?: (op: Deno.AtomicOperation, user: User) => Deno.AtomicOperation;
  /**
   * Only the user with this id (`user.id`): the deletion goes ahead while the email is theirs, and
   * throws `UnknownUserError` once it is not - a job retrying a deletion that finished meanwhile,
   * after the person signed up again, leaves their new account alone.
   */
  id?: string;
}

/**
 * Deletes a user: their record, their email (free to sign up with again) and every session of
 * theirs, so that their cookie is answered as signed out at the next request on every worker and
 * instance. From its first commit no sign-in (on any worker) starts a session for them, and
 * `getUser`, `signIn` and `setRoles` find nobody; it then ends their sessions, a bounded batch a
 * commit, and removes the record and the email. Each commit is retried as every write is; a call
 * cut short (a crash, a `KvBusyError`) leaves the user marked, gone to every look-up, and the next
 * call with the email finishes the work (until then sign-up answers that the account with this
 * email is being deleted): retry it from a job keyed by the user's id, with `id`, as docs/users.md
 * shows.
 *
 * The product's own data keyed by `user.id` is the product's to delete, and `also` is where it
 * hooks in: what it adds goes in the commit that removes the record, so it happens if and only if
 * the user is gone - a few keys of its own deleted, or a background job enqueued (`jobs.add`) that
 * deletes the rest, retried until done (docs/users.md).
 *
 * @param kv The store (`kvOf(ctx)` in a request; `Deno.openKv()` in a script).
 * @param email The user's email (normalised here).
 * @param options `also`: the product's part of the last commit; `id`: only the user with it.
 * @returns The user deleted, as requests saw them.
 * @throws {UnknownUserError} When no user has that email (or none with `id`): 404, the product's
 * refusal uncaught.
 * @throws {KvBusyError} When a commit lost every race, or the file stayed locked by another
 * process for seconds, as any write of `shell/data`.
 *
 * @example
 * ```ts
 * import { createUser, deleteUser, getUser } from "shell/auth";
 *
 * const kv = await Deno.openKv(":memory:");
 * await createUser(kv, { email: "ada@example.com", password: "a long passphrase" });
 * const ada = await deleteUser(kv, "ada@example.com");
 * await kv.delete(["notes", ada.id]); // the product's own data, by the id
 * console.log(await getUser(kv, ada.id)); // null
 * ```
 * @see docs/users.md - Deleting a user
 */
export async function deleteUser(
  kv: Deno.Kv,
  email: string,
  { also = (op) => op, id }: DeleteUserOptions = {},
): Promise<User> {
  const normal = normalizeEmail(email);
  const marked = await retrying("delete a user", async (commit) => {
    const entry = normal === undefined ? undefined : await storedEntry(kv, normal);
    // The mark's commit checks this record: an email another user took meanwhile fails it.
    if (!entry || (id !== undefined && entry.value.id !== id)) throw new UnknownUserError(email);
    if (entry.value.deletingSince !== undefined) return entry.value;
    const record = { ...entry.value, deletingSince: Date.now() };
    const op = withoutHolders(
      kv.atomic().check(entry).set(entry.key, record),
      record,
      record.roles.slice(0, ENTRIES_A_COMMIT),
    );
    return (await commit(op)).ok ? record : undefined;
  });
  // A record an older version wrote may hold 1,000 roles, past one commit with the mark (KV's bare
  // "Too many mutations" at every call: the user could not be deleted). Marked, they list nowhere
  // already, and no write gives them an entry again: the rest go a commit's worth at a time.
  for (let at = ENTRIES_A_COMMIT; at < marked.roles.length; at += ENTRIES_A_COMMIT) {
    const roles = marked.roles.slice(at, at + ENTRIES_A_COMMIT);
    await retrying("delete a user", async (commit) => {
      return (await commit(withoutHolders(kv.atomic(), marked, roles))).ok || undefined;
    });
  }
  // Every session begun before the mark is in the index: none can begin after it.
  await endAllSessions(kv, marked.id);
  await forgetDevices(kv, marked.id);
  const emailKey = [...EMAILS, marked.email];
  await retrying("delete a user", async (commit) => {
    const entry = await kv.get<UserRecord>([...USERS, marked.id]);
    const owner = await kv.get<string>(emailKey);
    if (entry.value === null) return true; // finished by another call meanwhile
    let op = kv.atomic().check(entry, owner).delete(entry.key).delete(beganKey(marked.id));
    if (owner.value === marked.id) op = op.delete(emailKey);
    return (await commit(also(op, publicUser(marked)))).ok || undefined;
  });
  return publicUser(marked);
}
