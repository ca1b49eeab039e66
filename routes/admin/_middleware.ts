/**
 * Guards every page and server action in `routes/admin/` with Hono's own basic auth. The user's
 * name is kept for the pages (`state.user`) and the actions (`requestContext().get("user")`).
 * Demo credentials, admin / admin: a real app checks its own user store.
 */
import { basicAuth } from "hono/basic-auth";

export const handler = basicAuth({
  realm: "admin",
  verifyUser(username, password, c) {
    const ok = username === "admin" && password === "admin";
    if (ok) c.set("user", username);
    return ok;
  },
});
