/**
 * Users, sessions and roles: `import { ... } from "shell/auth"`. Guard a folder with
 * `requireUser()` or `requireRole("admin")` in its `_middleware.ts`; sign people up, in and out
 * from server actions with `signUp`, `signIn`, `signOut` and `signOutEverywhere`; ask who is asking
 * with `currentUser(ctx)` (one KV read, none without the session cookie), or read `userOf(state)`
 * where a guard set it. Sessions live in Deno KV, the cookie holds only an opaque token, passwords
 * are stored as scrypt hashes. `createUser` is for scripts (`deno task users:add`); `setRoles` for
 * them and an admin's page; `roleHolders` lists who holds a role (the doctors a patient books
 * with); `deleteUser` for a product's account deletion. `defineRoles`, in
 * `routes/_roles.ts`, declares the app's roles: the guards and every write of roles keep to them.
 *
 * @example
 * ```ts
 * // routes/account/_middleware.ts: every page, API route and action in routes/account/
 * import { requireUser } from "shell/auth";
 *
 * export const handler = requireUser();
 * ```
 * @see docs/users.md
 * @module
 */
export { currentUser } from "./auth/current.ts";
export { requireRole, requireUser, userOf, type UserState, withUser } from "./auth/guards.ts";
export {
  type AuthResult,
  type CredentialFields,
  signIn,
  signUp,
  WRONG_CREDENTIALS,
} from "./auth/sign_in.ts";
export { signOut, signOutEverywhere } from "./auth/sign_out.ts";
export { type CredentialErrors, normalizeEmail } from "./auth/credentials.ts";
export { safeNext } from "./auth/next.ts";
export {
  createUser,
  getUser,
  type NewUser,
  setRoles,
  UnknownUserError,
  type User,
  UserExistsError,
} from "./auth/users.ts";
export {
  deleteUser,
  type DeleteUserOptions,
  type UnfinishedDeletion,
  unfinishedDeletions,
} from "./auth/user_deletion.ts";
export type { AuthOptions } from "./auth/settings.ts";
export { defineRoles, type Roles } from "./auth/roles.ts";
export { type HoldersOptions, type HoldersPage, roleHolders } from "./auth/role_holders.ts";
export { reindexRoles, type RolesReindexed } from "./auth/role_reindex.ts";
