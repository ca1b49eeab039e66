import { userOf } from "shell/auth";
import { logOut, logOutEverywhere } from "../_auth/actions.ts";
import { define } from "../_define.ts";
import { deleteAccount } from "./_actions.ts";

export default define.page(({ state }) => {
  const user = userOf(state);
  return (
    <>
      <title>Your account</title>
      <h1>Your account</h1>
      <p>
        Signed in as <strong>{user.email}</strong>
        {user.roles.length ? ` (${user.roles.join(", ")})` : ""}.
      </p>
      <form action={logOut}>
        <button type="submit">Log out</button>
      </form>
      <form action={logOutEverywhere}>
        <p>Lost a device, or signed in somewhere you should not have?</p>
        <button type="submit">Log out everywhere</button>
      </form>
      <form action={deleteAccount}>
        <h2>Delete account</h2>
        <p>This deletes your account and signs you out on every device. It cannot be undone.</p>
        <label>
          Type your email to confirm{" "}
          <input name="confirm" type="email" required autoComplete="off" />
        </label>{" "}
        <button type="submit">Delete account</button>
      </form>
    </>
  );
});
