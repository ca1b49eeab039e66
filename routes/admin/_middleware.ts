/**
 * Only users with the role `admin` reach `routes/admin/` — its pages and its server actions alike:
 * an anonymous visitor goes to `/login?next=%2Fadmin`, a signed-in user without the role gets 403
 * through `routes/_error.tsx`. The role is declared in `routes/_roles.ts`, which types the guard.
 * Make the first admin with `deno task users:add you@example.com --role admin`.
 */
import roles from "../_roles.ts";

export const handler = roles.requireRole("admin");
