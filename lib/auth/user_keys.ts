/**
 * @module
 * Where users live in KV: the record by id, the id by (normalised) email, and who holds each role.
 * Its own module because sessions read the user's record too - a new session takes its roles from
 * the record as it commits, checked in the same commit (sessions.ts) - and users.ts imports
 * sessions.ts; and because every write of a user's roles (users.ts, user_deletion.ts) writes the
 * role index in the same commit, with the helpers here.
 */
import { keySize, MAX_SET_KEYS_BYTES } from "../kv/limits.ts";

export const USERS = ["auth", "users"] as const;
export const EMAILS = ["auth", "emails"] as const;
/**
 * `[...HOLDERS, role, byName(name), id]`: the user holds the role. By name, so a listing is in the
 * order of the names a page shows, and its cursor tells no more than the page (an email would).
 */
export const HOLDERS = ["auth", "role_holders"] as const;

/** Whom an index entry is for: the user's name and id. */
export type Holder = { name: string; id: string };

/**
 * A name as the index orders it: lower case, and short enough for a KV key however long it is.
 * Well formed, as KV keeps a key: it writes a lone surrogate (an emoji cut in two at the 100th
 * unit, a client's "\ud800") as U+FFFD, and an entry read back under another name holds no one.
 */
export function byName(name: string): string {
  return name.toLowerCase().slice(0, 100).toWellFormed();
}

/** The index entry saying that the user holds `role`. */
export function holderKey(role: string, user: Holder): Deno.KvKey {
  return [...HOLDERS, role, byName(user.name), user.id];
}

/**
 * The first of `roles` whose entries for `user` one commit can write beside its other writes: at
 * most `count` of them, and `bytes` of keys in all (KV sets 80 KiB of keys a commit at most: 500
 * roles of 64 characters for a name of 40 pass it).
 */
export function fitting(
  user: Holder,
  roles: readonly string[],
  count: number,
  bytes = MAX_SET_KEYS_BYTES,
): string[] {
  let size = 0;
  const past = roles.findIndex((role, i) =>
    i >= count || (size += keySize(holderKey(role, user))) > bytes
  );
  return past === -1 ? [...roles] : roles.slice(0, past);
}

/** `op`, with the user's entries for `roles` written. */
export function withHolders(
  op: Deno.AtomicOperation,
  user: Holder,
  roles: readonly string[],
): Deno.AtomicOperation {
  for (const role of roles) op = op.set(holderKey(role, user), true);
  return op;
}

/** `op`, with the user's entries for `roles` deleted. */
export function withoutHolders(
  op: Deno.AtomicOperation,
  user: Holder,
  roles: readonly string[],
): Deno.AtomicOperation {
  for (const role of roles) op = op.delete(holderKey(role, user));
  return op;
}
