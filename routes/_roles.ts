/**
 * @module
 * The app's roles, declared once: `roles.requireRole()` names only these (a typo is a `deno check`
 * error, and stops the start besides), and `setRoles`, `createUser`, `signUp` and
 * `deno task users:add --role` refuse any other, naming these. Add a role here first, then guard a
 * folder with it (docs/users.md, Declaring the roles).
 */
import { defineRoles } from "shell/auth";

/** `admin`: the pages of `routes/admin/`. */
const roles = defineRoles(["admin"]);

export default roles;
