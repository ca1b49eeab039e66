/**
 * @module
 * Who holds a role, across two processes on one KV file: another process changing one user's roles
 * while this one changes them too leaves the index equal to the roles, and the holders it adds are
 * listed here, each once.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { roleHolders, setRoles } from "../../lib/auth.ts";
import { insertUser, type UserRecord } from "../../lib/auth/users.ts";
import { tempStore } from "../helpers/kv.ts";

const HASH = "$scrypt$ln=15,r=8,p=3$unused$unused";
const SETS = [["a"], ["b", "c"], [], ["a", "c"], ["d"], ["b"]];

/** What the other process runs: 60 changes of the user's roles, then 50 new holders of `doctor`. */
const OTHER = `
import { setRoles } from ${JSON.stringify(import.meta.resolve("../../lib/auth/users.ts"))};
import { insertUser } from ${JSON.stringify(import.meta.resolve("../../lib/auth/users.ts"))};
const [path, email] = Deno.args;
const sets = ${JSON.stringify(SETS)};
const kv = await Deno.openKv(path);
// Here, then wait for the test's loop to begin: the two write at once however slow either starts.
await kv.set(["test", "other"], "here");
for (let i = 0; i < 600 && (await kv.get(["test", "ours"])).value === null; i++) {
  await new Promise((resolve) => setTimeout(resolve, 50));
}
for (let i = 0; i < 60; i++) await setRoles(kv, email, sets[(i * 5) % sets.length]);
for (let i = 0; i < 50; i++) {
  await insertUser(kv, { email: "other" + i + "@example.com", passwordHash: "x", roles: ["doctor"] });
}
kv.close();
`;

Deno.test("two processes on one file: the index equals the roles, and every holder is listed once", async () => {
  await using store = await tempStore();
  const path = store.path;
  const script = `${path}.other.ts`;
  await Deno.writeTextFile(script, OTHER);
  using kv = await Deno.openKv(path);
  await roleHolders(kv, "doctor"); // built: what follows is the writes' own doing
  const user = await insertUser(kv, { email: "busy@example.com", passwordHash: HASH, roles: [] });
  const other = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--config=${fileURLToPath(import.meta.resolve("../../deno.json"))}`,
      script,
      path,
      user.email,
    ],
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  let running = true;
  const status = other.status.finally(() => running = false);
  // Both begin together (CI's nested run once saw this loop end before the other had started):
  // from here until the other process is done, its changes land between these.
  for (let i = 0; i < 600 && running && (await kv.get(["test", "other"])).value === null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await kv.set(["test", "ours"], "here");
  const ours: string[] = [];
  let changes = 0;
  for (let i = 0; i < 5_000 && (running || i < 60); i++, changes++) {
    await setRoles(kv, user.email, SETS[i % SETS.length]);
    if (i % 2 === 0 && i < 60) {
      const email = `ours${i}@example.com`;
      await insertUser(kv, { email, passwordHash: HASH, roles: ["doctor"] });
      ours.push(email);
    }
  }
  assert.equal((await status).code, 0);
  assert.ok(changes >= 60, `${changes} changes here`);

  const stored = (await kv.get<UserRecord>(["auth", "users", user.id])).value!;
  const indexed: string[] = [];
  for await (const { key } of kv.list({ prefix: ["auth", "role_holders"] })) {
    if (key[4] === user.id) indexed.push(String(key[2]));
  }
  assert.deepEqual(indexed.sort(), [...stored.roles].sort());

  const listed: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const found = await roleHolders(kv, "doctor", { limit: 9, cursor });
    listed.push(...found.users.map((holder) => holder.email));
    cursor = found.cursor;
    if (cursor === null) break;
  }
  const expected = [...ours, ...Array.from({ length: 50 }, (_, i) => `other${i}@example.com`)];
  // By name: the part of the email before the "@", as none was given.
  const name = (email: string) => email.slice(0, email.indexOf("@"));
  assert.deepEqual(listed, expected.sort((a, b) => name(a) < name(b) ? -1 : 1));
});
