import WhoAmI from "@/islands/WhoAmI.tsx";
import { userOf } from "shell/auth";
import { define } from "../_define.ts";

export default define.route("admin/index.tsx").page(({ state }) => (
  <>
    <title>Admin</title>
    <h1>Admin</h1>
    <p>
      Signed in as <strong>{userOf(state).email}</strong>, with the role{" "}
      <code>admin</code>. This folder's <code>_middleware.ts</code> is{" "}
      <code>requireRole("admin")</code>; it guards its pages and its server actions alike.
    </p>
    <WhoAmI />
  </>
));
