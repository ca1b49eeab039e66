/**
 * @module
 * Where users live in KV: the record by id, the id by (normalised) email, and who holds each role.
 * Its own module because sessions read the user's record too - a new session takes its roles from
 * the record as it commits, checked in the same commit (sessions.ts) - and users.ts imports
 * sessions.ts; and because every write of a user's roles (users.ts, user_deletion.ts) writes the
 * role index in the same commit, with the helpers here.
 */

export const USERS = ["auth", "users"] as const;
export const EMAILS = ["auth", "emails"] as const;
/** `[...HOLDERS, role, email, id]`: the user holds the role. By email, so a listing is in its order. */
export const HOLDERS = ["auth", "role_holders"] as const;

/** The index entry saying that the user holds `role`. */
export function holderKey(role: string, user: { email: string; id: string }): Deno.KvKey {
  return [...HOLDERS, role, user.email, user.id];
}

/** `op`, with the user's entries for `roles` written. */
export function withHolders(
  op: Deno.AtomicOperation,
  user: { email: string; id: string },
  roles: readonly string[],
): Deno.AtomicOperation {
  for (const role of roles) op = op.set(holderKey(role, user), true);
  return op;
}

/** `op`, with the user's entries for `roles` deleted. */
export function withoutHolders(
  op: Deno.AtomicOperation,
  user: { email: string; id: string },
  roles: readonly string[],
): Deno.AtomicOperation {
  for (const role of roles) op = op.delete(holderKey(role, user));
  return op;
}
