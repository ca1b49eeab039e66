/**
 * @module
 * The test kit's `signInAs` against a real server process (`deno task start`, by the test kit's
 * `startServer`) that shares its KV file (`kvPath`) with the test: a user made with a role in that
 * store, signed in without a password through the client given the store, reaches a page and a
 * server action behind `requireRole()` over real HTTP, and the session so begun ends at a sign-out
 * through the real action, in the store the server reads. A server on another store (`:memory:`)
 * cannot find the session: the client's first request that reads it throws, saying so.
 */
import assert from "node:assert/strict";
import { actionId } from "../../lib/build/actions.ts";
import { projectSalt } from "../../lib/build/salt.ts";
import { tokenHash } from "../../lib/auth/token.ts";
import { createUser } from "shell/auth";
import { startServer, TestClient } from "shell/testing";
import { builtCopy } from "../helpers/built_copy.ts";
import { tempStore } from "../helpers/kv.ts";
import { FIXTURE_ROOT } from "../helpers/project_copy.ts";

const FILES = {
  "routes/t/_actions.ts": `"use server";
import { requestContext } from "shell";
import { signOut } from "shell/auth";

export async function logOut() {
  await signOut(requestContext());
  return "signed out";
}
`,
  "routes/t/admin/_middleware.ts": `import { requireRole } from "shell/auth";
export const handler = requireRole("admin");
`,
  "routes/t/admin/_actions.ts": `"use server";
import { requestContext } from "shell";
import { currentUser } from "shell/auth";

export async function whoAmI() {
  return (await currentUser(requestContext()))?.email;
}
`,
  "routes/t/admin/index.tsx": `import type { PageProps } from "shell";
import type { UserState } from "shell/auth";
export default function Admin({ state }: PageProps<unknown, Record<string, string>, UserState>) {
  return <p>Admin: {state.user?.email}</p>;
}
`,
};

// The copy's actions are keyed with the test app's salt, as its build keys them.
const SALT = await projectSalt(FIXTURE_ROOT);
const WHO_AM_I = `/_action/${actionId("routes/t/admin/_actions.ts", "whoAmI", SALT)}`;
const LOG_OUT = `/_action/${actionId("routes/t/_actions.ts", "logOut", SALT)}`;

const project = () => builtCopy("sign-in-as", FILES);

/** Keys under `prefix` in `kv`. */
async function keys(kv: Deno.Kv, prefix: Deno.KvKey): Promise<Deno.KvKey[]> {
  const found = [];
  for await (const entry of kv.list({ prefix })) found.push(entry.key);
  return found;
}

Deno.test("signInAs to a server process through its KV file: a guarded page and action; sign-out ends it", async () => {
  await using server = await startServer({ root: await project() });
  using kv = await Deno.openKv(server.kvPath);
  await createUser(kv, { email: "root@example.com", password: "unused here", roles: ["admin"] });
  await createUser(kv, { email: "member@example.com", password: "unused here" });

  const anonymous = await new TestClient(server.origin).request("/t/admin");
  assert.equal(anonymous.status, 303, "the page is guarded");
  await anonymous.body?.cancel();

  const admin = new TestClient(server.origin, { kv });
  assert.deepEqual((await admin.signInAs("root@example.com")).roles, ["admin"]);
  const page = await admin.get("/t/admin");
  assert.equal(page.status, 200);
  assert.match(await page.text(), /Admin: <!-- -->root@example\.com/);
  assert.equal(await admin.call(WHO_AM_I), "root@example.com");
  // The cookies the server itself sets for an http origin: no `__Host-` prefix, not Secure.
  const cookies = await admin.cookies();
  assert.deepEqual(
    cookies.map(({ name, httpOnly, secure, sameSite }) => ({
      name,
      httpOnly,
      secure,
      sameSite,
    })),
    [
      { name: "session", httpOnly: true, secure: false, sameSite: "Lax" },
      { name: "session-mark", httpOnly: false, secure: false, sameSite: "Lax" },
    ],
  );

  // Without the role: 403 for the page and the action alike.
  const member = new TestClient(server.origin, { kv });
  await member.signInAs("member@example.com");
  const refused = await member.get("/t/admin");
  assert.equal(refused.status, 403);
  await refused.body?.cancel();
  await assert.rejects(member.call(WHO_AM_I), { name: "ActionError", status: 403 });

  // Signing out through the real action ends the session in the store the server reads.
  const token = (await admin.cookie("session"))!;
  assert.equal(await admin.call(LOG_OUT), "signed out");
  assert.equal(await admin.cookie("session"), undefined, "the cookie is cleared");
  assert.equal((await kv.get(["auth", "sessions", tokenHash(token)])).value, null);
  const after = await admin.request("/t/admin");
  assert.equal(after.status, 303, "signed out");
  await after.body?.cancel();
  const replayed = await fetch(`${server.origin}/t/admin`, {
    headers: { Cookie: `session=${token}` },
    redirect: "manual",
  });
  assert.equal(replayed.status, 303, "the old token signs nobody in");
  await replayed.body?.cancel();
  assert.equal((await keys(kv, ["auth", "sessions"])).length, 1, "the member's goes on");
});

Deno.test("signInAs through a KV file the server does not use: the first request that reads it says so", async () => {
  await using server = await startServer({ root: await project(), env: { KV_PATH: ":memory:" } });
  await using store = await tempStore();
  using kv = await Deno.openKv(store.path);
  await createUser(kv, { email: "root@example.com", password: "unused here", roles: ["admin"] });

  const client = new TestClient(server.origin, { kv });
  await client.signInAs("root@example.com");
  await assert.rejects(
    client.request("/t/admin"),
    /found no session for the cookie signInAs set, though the KV store given to the client holds it: the server uses another store/,
  );
});
