/**
 * @module
 * The example's first admin in tests, made in the app's store as `deno task users:add` makes one.
 * (Logging in through `/login` in a browser: `e2e/log_in.ts`.)
 */
import { createUser } from "shell/auth";

export const ADMIN = { email: "admin@example.com", password: "correct horse battery" };

/** The first admin, in `kv`. */
export async function addAdmin(kv: Deno.Kv): Promise<void> {
  await createUser(kv, { ...ADMIN, roles: ["admin"] });
}
