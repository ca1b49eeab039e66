/**
 * @module
 * An app's roles, declared once in `routes/_roles.ts` with `defineRoles`: the build puts the
 * declaration in the manifest, and `createApp` holds the app to it - every `requireRole()` of its
 * middleware must name a declared role or the app does not start, and `setRoles`, `createUser`
 * and `signUp` on its store refuse any other (`role_names.ts`), as `deno task users:add --role`
 * does. The declaration's own `requireRole` is typed with the names, so a typo is a `deno check`
 * error where it is written, and so are its `setRoles`, `signUp` and `createUser`'s roles. An app
 * without the file takes any well-formed name, as before.
 */
import type { Manifest } from "../server/manifest.ts";
import { middlewaresOf } from "../server/manifest.ts";
import type { Middleware } from "../server/types.ts";
import { requireRole } from "./guards.ts";
import { declareRolesFor, refuseUndeclared, ROLE_NAME, rolesOfGuard } from "./role_names.ts";
import type { AnyContext } from "../server/scope.ts";
import { type AuthResult, type CredentialFields, signUp } from "./sign_in.ts";
import { createUser, type NewUser, setRoles, type User } from "./users.ts";
import { type HoldersOptions, type HoldersPage, roleHolders } from "./role_holders.ts";

/**
 * What `defineRoles` returns: the declared names, and `requireRole`, `setRoles`, `signUp`,
 * `createUser` and `holders` typed with them.
 *
 * @example
 * ```ts
 * import { defineRoles, type Roles } from "shell/auth";
 *
 * const roles: Roles<"admin" | "clerk"> = defineRoles(["admin", "clerk"]);
 * console.log(roles.names); // ["admin", "clerk"]
 * ```
 * @see docs/users.md - Declaring the roles
 */
export interface Roles<R extends string = string> {
  /** The declared roles, in the declaration's order: `v.picklist(roles.names)` checks a form's. */
  readonly names: readonly R[];
  /**
   * `requireRole()` that takes only declared roles: another name is a `deno check` error.
   *
   * @param roles The roles that may pass; one of them is enough.
   * @returns The middleware, for a folder's `_middleware.ts`.
   */
  requireRole(...roles: [R, ...R[]]): Middleware;
  /**
   * `setRoles()` that takes only declared roles, typed, and checks them on any store: a script's
   * own `Deno.openKv()` too, which no app has tied to the declaration.
   *
   * @param kv The store.
   * @param email The user's email (normalised here).
   * @param roles Their roles from now on (`[]`: none).
   * @returns The user with the new roles.
   */
  setRoles(kv: Deno.Kv, email: string, roles: readonly R[]): Promise<User>;
  /**
   * `signUp()` whose `roles` are only declared ones, typed: `{ roles: ["membr"] }` is a
   * `deno check` error where it is written, not a `RangeError` at every sign-up.
   *
   * @param from `requestContext()` in a server action (or a handler's `ctx`, a middleware's `c`).
   * @param fields The form's `email` and `password`, as sent.
   * @param options `roles`: what every account made here has, the server's to say.
   * @returns The new, signed-in user, or the errors to show in the form.
   */
  signUp(
    from: AnyContext,
    fields: CredentialFields,
    options?: { roles?: readonly R[] },
  ): Promise<AuthResult>;
  /**
   * `createUser()` whose `roles` are only declared ones, typed, and checked on any store (a
   * script's or a seed's own, which no app has tied to the declaration).
   *
   * @param kv The store.
   * @param fields The email, the password, and optionally roles and a name.
   * @returns The new user.
   */
  createUser(kv: Deno.Kv, fields: NewUser<R>): Promise<User>;
  /**
   * `roleHolders()` of a declared role, typed: the users who hold it, a page at a time.
   *
   * @param kv The store.
   * @param role A declared role.
   * @param options `limit` (1 to 100, 50 by default) and the `cursor` of the page before.
   * @returns The users, by name, and the cursor of the next page (`null` at the end).
   */
  holders(kv: Deno.Kv, role: R, options?: HoldersOptions): Promise<HoldersPage>;
}

/**
 * Declares the app's roles, in `routes/_roles.ts` (its default export): `requireRole` names only
 * these (typed, and checked when the app starts), and `setRoles`, `createUser`, `signUp` and
 * `deno task users:add --role` refuse any other with a `RangeError` that names them. A user who
 * holds a role the app no longer declares still signs in; the role grants nothing, since no guard
 * may name it, and `setRoles` refuses to write it back (docs/users.md).
 *
 * @param names The roles: letters, digits, `_ - . :`, 64 at most each; at least one, none twice.
 * @returns The declaration: `names`, and `requireRole`, `setRoles`, `signUp`, `createUser` and
 * `holders` typed with them.
 * @throws {TypeError} When a name is not a role's name, or is there twice, or there is none.
 *
 * @example
 * ```ts
 * import { defineRoles } from "shell/auth";
 *
 * // routes/_roles.ts: `export default defineRoles(["admin", "clerk"]);`
 * const roles = defineRoles(["admin", "clerk"]);
 *
 * // routes/desk/_middleware.ts, with `import roles from "../_roles.ts";`
 * const handler = roles.requireRole("clerk"); // roles.requireRole("clrek"): a deno check error
 * console.log(typeof handler); // "function"
 * ```
 * @see docs/users.md - Declaring the roles
 */
export function defineRoles<const R extends string>(names: readonly [R, ...R[]]): Roles<R> {
  if (!Array.isArray(names) || names.length === 0) {
    throw new TypeError('defineRoles() needs the app\'s roles: defineRoles(["admin"])');
  }
  const bad = names.find((name) => typeof name !== "string" || !ROLE_NAME.test(name));
  if (bad !== undefined) {
    throw new TypeError(
      `defineRoles(): ${JSON.stringify(bad)} is not a role's name (letters, digits, _ - . and :, ` +
        "64 at most)",
    );
  }
  const declared = new Set<string>();
  for (const name of names) {
    if (declared.has(name)) throw new TypeError(`defineRoles(): "${name}" is declared twice`);
    declared.add(name);
  }
  return Object.freeze({
    names: Object.freeze([...names]),
    requireRole: (...roles: [R, ...R[]]) => requireRole(...roles),
    setRoles: async (kv: Deno.Kv, email: string, roles: readonly R[]) => {
      refuseUndeclared(roles, declared, "setRoles");
      return await setRoles(kv, email, roles);
    },
    signUp: async (
      from: AnyContext,
      fields: CredentialFields,
      options: { roles?: readonly R[] } = {},
    ) => {
      if (Array.isArray(options.roles)) refuseUndeclared(options.roles, declared, "signUp");
      return await signUp(from, fields, options);
    },
    createUser: async (kv: Deno.Kv, fields: NewUser<R>) => {
      if (Array.isArray(fields.roles)) refuseUndeclared(fields.roles, declared, "createUser");
      return await createUser(kv, fields);
    },
    holders: async (kv: Deno.Kv, role: R, options?: HoldersOptions) => {
      refuseUndeclared([role], declared, "holders");
      return await roleHolders(kv, role, options);
    },
  });
}

/**
 * Holds the app made from `manifest` to its declared roles, when it declares them: throws a
 * `RangeError` naming a route whose middleware's `requireRole()` names another, and ties `kv` to
 * the declaration for the writes of roles.
 */
export function holdToDeclaredRoles(manifest: Manifest, kv: Deno.Kv | undefined): void {
  if (manifest.roles === undefined) {
    // The latest app made on a store says: one made again without the file (dev) takes any name.
    if (kv) declareRolesFor(kv, undefined);
    return;
  }
  const declared = manifest.roles.names;
  if (!Array.isArray(declared)) {
    throw new TypeError(
      'routes/_roles.ts: its default export is the declaration: export default defineRoles(["admin"])',
    );
  }
  const known = new Set(declared);
  const chains = [
    { where: "routes/", middlewares: manifest.rootMiddlewares },
    ...manifest.routes.map(({ file, middlewares }) => ({ where: `routes/${file}`, middlewares })),
    ...manifest.actions.entries.map(({ file, name, middlewares }) => ({
      where: `${file}'s action ${name}`,
      middlewares,
    })),
    ...manifest.folders.map(({ folder, middlewares }) => ({
      where: `routes/${folder}/`,
      middlewares,
    })),
  ];
  for (const { where, middlewares } of chains) {
    for (const guard of middlewares.flatMap(middlewaresOf)) {
      const undeclared = rolesOfGuard(guard)?.find((role) => !known.has(role));
      if (undeclared === undefined) continue;
      throw new RangeError(
        `requireRole("${undeclared}") guards ${where}, but routes/_roles.ts does not declare ` +
          `"${undeclared}"; it declares ${declared.map((role) => `"${role}"`).join(", ")}`,
      );
    }
  }
  if (kv) declareRolesFor(kv, declared);
}
