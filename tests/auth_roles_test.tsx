/**
 * @module
 * An app's declared roles (`routes/_roles.ts`, `defineRoles`): its `requireRole` is typed with the
 * names (each `@ts-expect-error` below must meet an error, or `deno check`, and so `deno test`,
 * fails on this file), a guard naming another stops the app's start, and `setRoles`, `createUser`
 * and `signUp` on its store refuse another with a `RangeError` naming the declared ones, before
 * anything is written. A user who holds a role no longer declared still signs in; the role grants
 * nothing and is not written back. An app without a declaration takes any well-formed name. The
 * declaration's own `setRoles`, `signUp` and `createUser` are typed with its names, and check them on
 * any store. More than 500 roles on one user is a `RangeError` naming the limit, before KV; a
 * declaration of many names is checked for repeats in linear time.
 */
import assert from "node:assert/strict";
import { createUser, defineRoles, getUser, requireRole, setRoles, signUp } from "../lib/auth.ts";
import { requestContext } from "../lib/mod.ts";
import { TestClient } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";
import {
  actionIds,
  authFiles,
  callAction,
  credentials,
  STORED_PASSWORD,
  storedUser,
} from "./helpers/auth.tsx";

const NEVER = false as boolean;
const ROOMY = {
  signInPerClient: { limit: 1000, windowMs: 60_000 },
  signInPerAccount: { limit: 1000, windowMs: 60_000 },
  signUpPerClient: { limit: 1000, windowMs: 60_000 },
};
const DECLARED = /routes\/_roles\.ts declares "admin", "clerk"$/;

Deno.test("defineRoles: the names, and requireRole typed with them", () => {
  const roles = defineRoles(["admin", "clerk"]);
  assert.deepEqual(roles.names, ["admin", "clerk"]);
  assert.equal(typeof roles.requireRole("clerk", "admin"), "function");
  if (NEVER) {
    // @ts-expect-error -- a typo of a declared role
    roles.requireRole("admn");
    // @ts-expect-error -- a typo of a declared role
    roles.setRoles(Deno.openKv() as never, "ada@example.com", ["clerk", "admn"]);
    // @ts-expect-error -- a guard names at least one role
    roles.requireRole();
    // @ts-expect-error -- the names are the declared ones, not any string
    const _any: readonly "root"[] = roles.names;
    const fields = { email: "ada@example.com", password: "a passphrase" };
    // @ts-expect-error -- a typo of a declared role: a sign-up's roles are typed too
    roles.signUp(requestContext(), fields, { roles: ["clrek"] });
    // @ts-expect-error -- a typo of a declared role: a script's or a seed's new user's too
    roles.createUser(Deno.openKv() as never, { ...fields, roles: ["admin", "membr"] });
  }
  for (
    const [names, message] of [
      [[], /needs the app's roles/],
      [["admin", "two words"], /"two words" is not a role's name/],
      [["admin", "admin"], /"admin" is declared twice/],
    ] as const
  ) {
    assert.throws(() => defineRoles(names as unknown as ["admin"]), message);
  }
});

Deno.test("an app that declares its roles does not start with a guard naming another, and says which", async () => {
  using store = await Deno.openKv(":memory:");
  const routes = {
    "desk/_middleware.ts": { handler: requireRole("clrek") },
    "desk/index.tsx": { default: () => <h1>Desk</h1> },
  };
  const roles = defineRoles(["admin", "clerk"]);
  assert.throws(
    () => memoryApp({ routes, roles }, { kv: store }),
    {
      name: "RangeError",
      message: 'requireRole("clrek") guards routes/desk/index.tsx, but routes/_roles.ts does not ' +
        'declare "clrek"; it declares "admin", "clerk"',
    },
  );
  // Before, it started, and the folder was closed to everyone.
  using open = await Deno.openKv(":memory:");
  const undeclared = memoryApp({ routes }, { kv: open });
  const page = await undeclared.fetch(new Request("http://localhost/desk"));
  assert.equal(page.status, 303, "no declaration: any well-formed name, as before");
  assert.equal(page.headers.get("location"), "/login?next=%2Fdesk");
});

Deno.test("setRoles, createUser and signUp on the app's store refuse an undeclared role, naming the declared ones", async () => {
  using store = await Deno.openKv(":memory:");
  const join = async (form: FormData) => {
    const fields = { email: form.get("email"), password: form.get("password") };
    try {
      const result = await signUp(requestContext(), fields, { roles: [String(form.get("role"))] });
      return result.ok ? result.user.roles : null;
    } catch (error) {
      return `${(error as Error).name}: ${(error as Error).message}`;
    }
  };
  const app = memoryApp({
    routes: {},
    roles: defineRoles(["admin", "clerk"]),
    actions: { "routes/_join/actions.ts": { join } },
  }, { kv: store, auth: ROOMY });

  const grace = await createUser(store, { email: "grace@example.com", password: "a passphrase" });
  await assert.rejects(
    setRoles(store, grace.email, ["clerk", "admn"]),
    (error: Error) =>
      error instanceof RangeError &&
      /^setRoles: "admn" is not one of the app's roles; /.test(error.message) &&
      DECLARED.test(error.message),
  );
  assert.deepEqual((await getUser(store, grace.id))?.roles, [], "nothing stored");
  await assert.rejects(
    createUser(store, { email: "x@example.com", password: "a passphrase", roles: ["root"] }),
    (error: Error) =>
      error instanceof RangeError && /^createUser: "root" is not one/.test(error.message) &&
      DECLARED.test(error.message),
  );
  assert.equal((await store.get(["auth", "emails", "x@example.com"])).value, null);
  assert.deepEqual((await setRoles(store, grace.email, ["clerk", "admin"])).roles, [
    "clerk",
    "admin",
  ]);

  const client = new TestClient(app);
  const form = credentials("pat@example.com", STORED_PASSWORD);
  form.set("role", "patient");
  const refused = await client.call(join, form);
  assert.match(String(refused), /^RangeError: signUp: "patient" is not one of the app's roles; /);
  assert.match(String(refused), DECLARED);
  assert.equal((await store.get(["auth", "emails", "pat@example.com"])).value, null);
  form.set("role", "clerk");
  assert.deepEqual(await client.call(join, form), ["clerk"]);
});

Deno.test("a user holding a role no longer declared signs in; the role grants nothing and is not written back", async () => {
  using store = await Deno.openKv(":memory:");
  const app = memoryApp({ ...authFiles(), roles: defineRoles(["admin", "clerk"]) }, {
    kv: store,
    auth: ROOMY,
  });
  const old = await storedUser(store, "old@example.com", { roles: ["retired"] });
  const client = new TestClient(app);
  const signedIn = await callAction(client, actionIds.logIn, [
    credentials(old.email, STORED_PASSWORD),
  ]);
  assert.equal(signedIn.answer?.email, old.email, "signed in");
  const admin = await client.request("/admin");
  assert.equal(admin.status, 403, "the stale role opens nothing");
  await admin.body?.cancel();
  await assert.rejects(
    setRoles(store, old.email, [...old.roles, "clerk"]),
    /setRoles: "retired" is not one of the app's roles/,
  );
  assert.deepEqual((await setRoles(store, old.email, ["clerk"])).roles, ["clerk"]);
});

Deno.test("the declaration's setRoles checks on a script's own store, which no app holds to it", async () => {
  using store = await Deno.openKv(":memory:");
  const roles = defineRoles(["admin", "clerk"]);
  const ada = await createUser(store, { email: "ada@example.com", password: "a passphrase" });
  await assert.rejects(
    roles.setRoles(store, ada.email, ["admn" as "admin"]),
    (error: Error) =>
      error instanceof RangeError && /^setRoles: "admn" is not one/.test(error.message) &&
      DECLARED.test(error.message),
  );
  assert.deepEqual((await getUser(store, ada.id))?.roles, []);
  assert.deepEqual((await roles.setRoles(store, ada.email, ["admin"])).roles, ["admin"]);
  // The shell's own setRoles on this store: no app declared roles for it, any name as before.
  assert.deepEqual((await setRoles(store, ada.email, ["admn"])).roles, ["admn"]);
});

Deno.test("the declaration's signUp and createUser take its roles, and check them on any store", async () => {
  using store = await Deno.openKv(":memory:");
  const roles = defineRoles(["admin", "clerk"]);
  const fields = { email: "ada@example.com", password: "a passphrase" };
  await assert.rejects(
    roles.createUser(store, { ...fields, roles: ["admn" as "admin"] }),
    (error: Error) =>
      error instanceof RangeError && /^createUser: "admn" is not one/.test(error.message) &&
      DECLARED.test(error.message),
  );
  assert.equal((await store.get(["auth", "emails", fields.email])).value, null);
  assert.deepEqual((await roles.createUser(store, { ...fields, roles: ["clerk"] })).roles, [
    "clerk",
  ]);

  const join = async (form: FormData) => {
    const given = { email: form.get("email"), password: form.get("password") };
    const role = String(form.get("role")) as "clerk";
    try {
      const result = await roles.signUp(requestContext(), given, { roles: [role] });
      return result.ok ? result.user.roles : null;
    } catch (error) {
      return `${(error as Error).name}: ${(error as Error).message}`;
    }
  };
  // An app with no declaration: only the declaration's own signUp holds to its roles.
  const app = memoryApp({ routes: {}, actions: { "routes/_join/actions.ts": { join } } }, {
    kv: store,
    auth: ROOMY,
  });
  const client = new TestClient(app);
  const form = credentials("pat@example.com", STORED_PASSWORD);
  form.set("role", "clrek");
  const refused = await client.call(join, form);
  assert.match(String(refused), /^RangeError: signUp: "clrek" is not one of the app's roles; /);
  assert.match(String(refused), DECLARED);
  assert.equal((await store.get(["auth", "emails", "pat@example.com"])).value, null);
  form.set("role", "clerk");
  assert.deepEqual(await client.call(join, form), ["clerk"]);
});

Deno.test("the latest app made on a store says: made again without a declaration, any name; a default export that is no declaration stops the start", async () => {
  using store = await Deno.openKv(":memory:");
  const ada = await createUser(store, { email: "ada@example.com", password: "a passphrase" });
  memoryApp({ routes: {}, roles: defineRoles(["admin"]) }, { kv: store });
  await assert.rejects(setRoles(store, ada.email, ["clerk"]), RangeError);
  memoryApp({ routes: {} }, { kv: store });
  assert.deepEqual((await setRoles(store, ada.email, ["clerk"])).roles, ["clerk"]);
  assert.throws(
    () => memoryApp({ routes: {}, roles: ["admin"] as never }, { kv: store }),
    /routes\/_roles\.ts: its default export is the declaration/,
  );
});

Deno.test("more roles than one user may hold (500) is a RangeError naming the limit, before KV's bare 'Value too large'", async () => {
  using store = await Deno.openKv(":memory:");
  const ada = await createUser(store, { email: "ada@example.com", password: "a passphrase" });
  const many = Array.from({ length: 5_000 }, (_, i) => `role-${i}`);
  const tooMany = (error: Error) =>
    error instanceof RangeError &&
    error.message.startsWith("setRoles: 5000 roles, more than the 500 one user may hold;");
  await assert.rejects(setRoles(store, ada.email, many), tooMany);
  assert.deepEqual((await getUser(store, ada.id))?.roles, [], "nothing written");
  await assert.rejects(
    createUser(store, { email: "bo@example.com", password: "a passphrase", roles: many }),
    /^RangeError: createUser: 5000 roles, more than the 500/,
  );
  // The limit's worst case, the longest names, fits in KV's value.
  const longest = Array.from({ length: 500 }, (_, i) => String(i).padStart(64, "r"));
  assert.equal((await setRoles(store, ada.email, longest)).roles.length, 500);
});

Deno.test("a list of roles too long is refused by its length, before any name in it is read", async () => {
  using store = await Deno.openKv(":memory:");
  const ada = await createUser(store, { email: "ada@example.com", password: "a passphrase" });
  // A client's list: long, its last name no role's. Before, each name was tested first, and the
  // refusal was the TypeError naming the last one.
  const sent = [...Array.from({ length: 99_999 }, () => "reader"), "super admin"];
  let read = 0;
  const counted = new Proxy(sent, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) read++;
      return Reflect.get(target, key, receiver);
    },
  });
  await assert.rejects(
    setRoles(store, ada.email, counted),
    (error: Error) =>
      error instanceof RangeError &&
      error.message.startsWith("setRoles: 100000 roles, more than the 500 one user may hold;"),
  );
  assert.equal(read, 0, "no name was read");
});

Deno.test("defineRoles reads each name a few times, not once for every other name", () => {
  const list = Array.from({ length: 2_000 }, (_, i) => `role-${i}`);
  let reads = 0;
  const names = new Proxy(list, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  }) as unknown as [string, ...string[]];
  assert.equal(defineRoles(names).names.length, 2_000);
  // A scan for repeats per name read about two million (100,000 names took 27 s); a Set, a few
  // thousand. Counted, not timed: a loaded machine cannot make it fail.
  assert.ok(reads <= 10 * list.length, `${reads} reads of ${list.length} names`);
});
