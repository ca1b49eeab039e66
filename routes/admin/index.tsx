import WhoAmI from "@/islands/WhoAmI.tsx";
import { defineRoute } from "shell";

const route = defineRoute("admin/index.tsx");

export default route.page(({ state }) => (
  <>
    <title>Admin</title>
    <h1>Admin</h1>
    <p>
      Signed in as <strong>{String(state.user)}</strong>. This folder's <code>_middleware.ts</code>
      {" "}
      is <code>hono/basic-auth</code>; it guards its pages and its server actions alike.
    </p>
    <WhoAmI />
  </>
));
