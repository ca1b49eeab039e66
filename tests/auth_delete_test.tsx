/**
 * @module
 * Deleting a user (`deleteUser`), on two app instances with their own handles on one KV file, as
 * two processes under `deno serve --parallel` or on Deploy: the record, the email and every session
 * go, and a deleted user's cookie is answered as signed out at the next request on either instance;
 * a deletion cut short is finished by the next call; a user deleted on one instance while signing
 * in on the other gets the form's answer, never a 500 and never a session; and the test kit's
 * `signInAs` answers with the roles its session holds, a change of roles meanwhile included.
 */
import assert from "node:assert/strict";
import { deleteUser, getUser, setRoles, unfinishedDeletions, type User } from "../lib/auth.ts";
import { isHttpError } from "../lib/mod.ts";
import { resolveAuth } from "../lib/auth/settings.ts";
import { startSession } from "../lib/auth/sessions.ts";
import { TestClient } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";
import { tempStore } from "./helpers/kv.ts";
import {
  actionIds,
  authFiles,
  callAction,
  credentials,
  STORED_PASSWORD,
  storedUser,
} from "./helpers/auth.tsx";

const ROOMY = {
  signInPerClient: { limit: 1000, windowMs: 60_000 },
  signInPerAccount: { limit: 1000, windowMs: 60_000 },
  signUpPerClient: { limit: 1000, windowMs: 60_000 },
};

/** Two handles on one file, each an app's: instance `a` and instance `b`. */
async function twoInstances(wrapA: (kv: Deno.Kv, other: Deno.Kv) => Deno.Kv = (kv) => kv) {
  const store = await tempStore();
  const [a, b] = [await Deno.openKv(store.path), await Deno.openKv(store.path)];
  return {
    a,
    b,
    appA: memoryApp(authFiles(), { kv: wrapA(a, b), auth: ROOMY }),
    appB: memoryApp(authFiles(), { kv: b, auth: ROOMY }),
    async [Symbol.asyncDispose]() {
      a.close();
      b.close();
      await store[Symbol.asyncDispose]();
    },
  };
}

/**
 * `kv`, whose first listing of a user's sessions - a session about to start, after the password's
 * hash - waits for `meanwhile(other)`: another instance's write, committed in between.
 */
function meanwhileStarting(kv: Deno.Kv, other: Deno.Kv, meanwhile: (other: Deno.Kv) => unknown) {
  const done: { promise?: Promise<unknown> } = {};
  const proxy = new Proxy(kv, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name !== "list") return typeof value === "function" ? value.bind(target) : value;
      return (selector: { prefix: Deno.KvKey }, options?: Deno.KvListOptions) => {
        if (selector.prefix[1] === "user_sessions" && !done.promise) {
          done.promise = Promise.resolve(meanwhile(other));
          return (async function* () {
            await done.promise;
            yield* target.list(selector, options);
          })();
        }
        return target.list(selector, options);
      };
    },
  });
  return { kv: proxy, done };
}

/** What `leftOf` finds of a user deleted. */
const GONE = { record: false, email: false, sessions: 0, index: 0, devices: 0, began: false };

async function keysUnder(kv: Deno.Kv, prefix: Deno.KvKey): Promise<Deno.KvKey[]> {
  return await Array.fromAsync(kv.list({ prefix }), (entry) => entry.key);
}

/** What the store still holds of `user`: their record, email, sessions, index entries, devices. */
async function leftOf(kv: Deno.Kv, user: User) {
  const sessions = await Array.fromAsync(
    kv.list<{ userId: string }>({ prefix: ["auth", "sessions"] }),
  );
  return {
    record: (await kv.get(["auth", "users", user.id])).value !== null,
    email: (await kv.get(["auth", "emails", user.email])).value !== null,
    sessions: sessions.filter((entry) => entry.value.userId === user.id).length,
    index: (await keysUnder(kv, ["auth", "user_sessions", user.id])).length,
    devices: (await keysUnder(kv, ["auth", "devices", user.id])).length,
    // sessions.ts's bound of sessions at once: checked and moved by every sign-in's commit.
    began: (await kv.get(["auth", "user_began", user.id])).value !== null,
  };
}

Deno.test("deleteUser: the record, the email and every session go; signed out at the next request on every instance", async () => {
  await using t = await twoInstances();
  const ada = await storedUser(t.a, "ada@example.com");
  const onA = new TestClient(t.appA);
  const onB = new TestClient(t.appB);
  await onA.signInAs(ada);
  // Through the form: a session, and the browser known for the account (devices.ts).
  const signedIn = await callAction(onB, actionIds.logIn, [
    credentials("ada@example.com", STORED_PASSWORD),
  ]);
  assert.deepEqual(signedIn.answer, { email: "ada@example.com" });
  assert.equal((await keysUnder(t.b, ["auth", "devices", ada.id])).length, 1);
  // More sessions than one batch (200: a commit takes 1,000 mutations, ending one is two), as a
  // user signing in from many places at once may keep for a while: they go in bounded commits.
  // The settings past the bound an app may declare (100), so that none ends another here.
  const many = { ...resolveAuth({}, undefined, "http:"), sessionsPerUser: 10_000 };
  for (let i = 0; i < 210; i++) assert.ok(await startSession(t.a, ada, many));
  assert.equal((await onA.request("/account")).status, 200);
  assert.equal((await onB.request("/account")).status, 200);

  const deleted = await deleteUser(t.b, "  ADA@example.com ");
  assert.deepEqual(deleted, ada);
  assert.deepEqual(await leftOf(t.a, ada), GONE);
  for (const [client, app] of [[onA, "a"], [onB, "b"]] as const) {
    const res = await client.request("/account");
    assert.equal(res.status, 303, `instance ${app}: signed out`);
    assert.match(res.headers.get("location") ?? "", /^\/login\?next=/);
    assert.match(res.headers.get("set-cookie") ?? "", /^session=;/, "the cookie cleared");
  }
  assert.equal(await getUser(t.a, ada.id), null);
  const signIn = await callAction(new TestClient(t.appA), actionIds.logIn, [
    credentials("ada@example.com", STORED_PASSWORD),
  ]);
  assert.equal(signIn.status, 200, signIn.text);
  assert.deepEqual(signIn.answer?.errors, { form: "Wrong email or password." });
  await assert.rejects(onB.signInAs("ada@example.com"), /No user has the email ada@example\.com/);
  await assert.rejects(deleteUser(t.a, "ada@example.com"), (error) => {
    assert.ok(isHttpError(error) && error.status === 404, String(error));
    assert.equal(error.message, "No user has the email ada@example.com");
    return true;
  });
  // The email is free: signing up with it makes a new account, with a new id.
  const again = await callAction(new TestClient(t.appB), actionIds.join, [
    credentials("ada@example.com", STORED_PASSWORD),
  ]);
  assert.deepEqual(again.answer, { email: "ada@example.com" });
  const [entry] = await Array.fromAsync(t.a.list<string>({ prefix: ["auth", "emails"] }));
  assert.notEqual(entry.value, ada.id);
});

Deno.test("a deletion cut short: the user is gone to every look-up, and the next call finishes it", async () => {
  await using t = await twoInstances();
  const grace = await storedUser(t.a, "grace@example.com");
  const client = new TestClient(t.appA);
  await client.signInAs(grace);
  // A store that fails once the user is marked, before their sessions end: a crash, a lost lock.
  const failing = new Proxy(t.b, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name === "list") {
        return () => {
          throw new Error("the worker went away");
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  await assert.rejects(deleteUser(failing, "grace@example.com"), /the worker went away/);
  assert.equal(await getUser(t.a, grace.id), null);
  await assert.rejects(client.signInAs(grace), /No user has the email grace@example\.com/);
  const signIn = await callAction(new TestClient(t.appB), actionIds.logIn, [
    credentials("grace@example.com", STORED_PASSWORD),
  ]);
  assert.deepEqual(signIn.answer?.errors, { form: "Wrong email or password." });
  await assert.rejects(setRoles(t.a, "grace@example.com", ["admin"]), /No user has the email/);

  assert.deepEqual(await deleteUser(t.a, "grace@example.com"), grace);
  assert.deepEqual(await leftOf(t.a, grace), GONE);
  assert.equal((await client.request("/account")).status, 303);
});

Deno.test("a user deleted on another instance while signing in: the form's answer, no session, never a 500", async () => {
  let deleted: User | undefined;
  await using t = await twoInstances((kv, other) =>
    meanwhileStarting(kv, other, async (other) => {
      deleted = await deleteUser(other, "kim@example.com");
    }).kv
  );
  const kim = await storedUser(t.a, "kim@example.com");
  const client = new TestClient(t.appA);
  const call = await callAction(client, actionIds.logIn, [
    credentials("kim@example.com", STORED_PASSWORD),
  ]);
  assert.ok(deleted, "deleted after the password was checked, before the session began");
  assert.equal(call.status, 200, call.text);
  assert.deepEqual(call.answer?.errors, { form: "Wrong email or password." });
  assert.equal(call.res.headers.get("set-cookie"), null, "no session cookie");
  assert.deepEqual(await leftOf(t.a, kim), GONE);
  assert.equal((await client.request("/account")).status, 303);
});

Deno.test("signInAs of a user deleted meanwhile on another instance: an error that says so", async () => {
  await using t = await twoInstances((kv, other) =>
    meanwhileStarting(kv, other, (other) => deleteUser(other, "lee@example.com")).kv
  );
  const lee = await storedUser(t.a, "lee@example.com");
  await assert.rejects(new TestClient(t.appA).signInAs(lee), {
    name: "RangeError",
    message: "The user with the email lee@example.com was deleted as they signed in",
  });
  assert.deepEqual(await leftOf(t.a, lee), GONE);
});

Deno.test("signInAs answers with the roles its session holds: a change of roles meanwhile on another instance", async () => {
  // The session takes the roles as it commits; signInAs answered with the ones it first read.
  await using t = await twoInstances((kv, other) =>
    meanwhileStarting(kv, other, (other) => setRoles(other, "demoted@example.com", [])).kv
  );
  const demoted = await storedUser(t.a, "demoted@example.com", { roles: ["admin"] });
  const client = new TestClient(t.appA);
  const user = await client.signInAs(demoted);
  assert.deepEqual(user, { ...demoted, roles: [] });
  assert.equal((await client.request("/admin")).status, 403, "the session holds no role");
});

Deno.test("deleteUser's also: the product's part goes in the commit that removes the user, or neither", async () => {
  await using t = await twoInstances();
  const bo = await storedUser(t.a, "bo@example.com");
  await t.a.set(["notes", bo.id], "the product's data");
  // A check of the product's that fails: nothing of its part, and the user is not removed either.
  const conflict = { key: ["notes", bo.id], versionstamp: null };
  await assert.rejects(
    deleteUser(t.b, "bo@example.com", { also: (op) => op.check(conflict) }),
    { name: "KvBusyError" },
  );
  assert.equal((await t.a.get(["notes", bo.id])).value, "the product's data");
  assert.deepEqual(await leftOf(t.a, bo), {
    record: true,
    email: true,
    sessions: 0,
    index: 0,
    devices: 0,
    began: false,
  });
  assert.equal(await getUser(t.a, bo.id), null, "gone to every look-up meanwhile");

  const gone = await deleteUser(t.b, "bo@example.com", {
    also: (op, user) => op.delete(["notes", user.id]).set(["forgotten", user.id], true),
  });
  assert.deepEqual(gone, bo);
  assert.equal((await t.a.get(["notes", bo.id])).value, null);
  assert.equal((await t.a.get(["forgotten", bo.id])).value, true);
  assert.deepEqual(await leftOf(t.a, bo), GONE);
});

Deno.test("a deletion cut short: sign-up says the account is being deleted, unfinishedDeletions lists it, and a retry with the id finishes it", async () => {
  await using t = await twoInstances();
  const ann = await storedUser(t.a, "ann@example.com");
  await assert.rejects(
    deleteUser(t.b, "ann@example.com", {
      also: () => {
        throw new Error("the product's part failed");
      },
    }),
    /the product's part failed/,
  );
  const signUp = () =>
    callAction(new TestClient(t.appA), actionIds.join, [
      credentials("ann@example.com", STORED_PASSWORD),
    ]);
  // Before: "An account with this email exists." - of an account that is gone to every look-up.
  assert.deepEqual((await signUp()).answer?.errors, {
    email: "The account with this email is being deleted.",
  });
  // Ops see it: before, nothing listed a deletion cut short.
  const [unfinished, ...others] = await unfinishedDeletions(t.a);
  assert.deepEqual(others, []);
  assert.deepEqual({ ...unfinished, deletingSince: 0 }, {
    id: ann.id,
    email: "ann@example.com",
    deletingSince: 0,
  });
  assert.ok(unfinished.deletingSince <= Date.now());
  assert.deepEqual(await deleteUser(t.a, "ann@example.com", { id: ann.id }), ann);
  assert.deepEqual(await leftOf(t.a, ann), GONE);
  assert.deepEqual(await unfinishedDeletions(t.a), [], "finished: listed no more");
  assert.equal((await signUp()).answer?.email, "ann@example.com", "free to sign up with again");
});

Deno.test("deleteUser with { id }: a retry after the person signed up again leaves the new account alone", async () => {
  await using t = await twoInstances();
  const first = await storedUser(t.a, "rae@example.com");
  await deleteUser(t.b, "rae@example.com", { id: first.id });
  const again = await storedUser(t.a, "rae@example.com");
  // Before, the id was not looked at: the job's retry deleted the new account.
  await assert.rejects(deleteUser(t.b, "rae@example.com", { id: first.id }), {
    name: "UnknownUserError",
  });
  assert.deepEqual(await getUser(t.a, again.id), again);
  await assert.rejects(deleteUser(t.b, "nobody@example.com", { id: first.id }), {
    name: "UnknownUserError",
  });
});
