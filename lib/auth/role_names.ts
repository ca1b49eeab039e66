/**
 * @module
 * What a role's name may be, and the roles an app declares (`routes/_roles.ts`) as every writer of
 * roles sees them: by the store it writes to. `createApp` ties its store to its declaration, so
 * `setRoles`, `createUser` and `signUp` on that store refuse a role the app does not declare, and
 * checks that every `requireRole()` of its middleware names a declared one. A store no app
 * declared roles for (a team's first day, a script's own) takes any well-formed name, as before.
 * Leaf module: the guards and the users' writes both read it.
 */

/**
 * What a role's name may be: `deno task users:add --role` takes the same. `.` and `:` too: apps
 * stored namespaced roles (`billing:read`, `org.admin`) before names were checked, and a
 * `setRoles` keeping them would throw.
 */
export const ROLE_NAME = /^[\w.:-]{1,64}$/;

/**
 * How many roles one user may hold: 500 of the longest names keep the user's record well within
 * KV's 64 KiB value, where 1,000 would not fit. Roles are kinds of users; what each user may reach
 * (teams, documents) belongs in the product's own keys (docs/users.md, "Roles per organisation").
 */
export const MAX_ROLES = 500;

/** The declared roles of each store an app with a declaration was made on. */
const declaredOf = new WeakMap<Deno.Kv, ReadonlySet<string>>();

/** The roles each `requireRole()` guard lets through, for the check at start. */
const guarded = new WeakMap<object, readonly string[]>();

/**
 * Ties `kv` to the app's declared roles: its role writes refuse any other from now on; `undefined`
 * unties it.
 */
export function declareRolesFor(kv: Deno.Kv, names: readonly string[] | undefined): void {
  if (names) declaredOf.set(kv, new Set(names));
  else declaredOf.delete(kv);
}

/** The roles declared for `kv`; undefined when no app declared any for it. */
export function declaredRolesOf(kv: Deno.Kv): ReadonlySet<string> | undefined {
  return declaredOf.get(kv);
}

/** Remembers the roles a `requireRole()` guard names. */
export function markGuard(guard: object, roles: readonly string[]): void {
  guarded.set(guard, roles);
}

/** The roles a guard names, when it is one of `requireRole()`'s. */
export function rolesOfGuard(guard: unknown): readonly string[] | undefined {
  return typeof guard === "function" ? guarded.get(guard) : undefined;
}

/**
 * Nothing when each of `roles` is declared (or nothing is); otherwise a `RangeError` that names the
 * first that is not and the roles the app declares, so the fix (a typo, or a role to add to
 * `routes/_roles.ts`) is in the message.
 */
export function refuseUndeclared(
  roles: readonly string[],
  declared: ReadonlySet<string> | undefined,
  whose: string,
): void {
  const undeclared = declared && roles.find((role) => !declared.has(role));
  if (undeclared === undefined) return;
  throw new RangeError(
    `${whose}: "${undeclared}" is not one of the app's roles; routes/_roles.ts declares ` +
      `${[...declared!].map((role) => `"${role}"`).join(", ")}`,
  );
}
