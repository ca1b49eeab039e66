import { useState } from "react";
import { whoAmI } from "@/routes/admin/_actions.ts";

/** Asks the server who is signed in: a server action behind the folder's `requireRole("admin")`. */
export default function WhoAmI() {
  const [user, setUser] = useState<string>();
  return (
    <p>
      <button type="button" onClick={async () => setUser(await whoAmI())}>Who am I?</button>{" "}
      {user && <output>The action says: {user}</output>}
    </p>
  );
}
