/**
 * @module
 * The example app's pages and actions, in-process, tested as a product's author would with the
 * test kit (`shell/testing`): the app from its build, asked with `app.request()`; each example
 * page renders (an unknown post, under any name, is the 404 page); the guestbook's form posted
 * without JavaScript comes back with its errors, then signs, and its page shows as many entries as
 * its setting says; `/admin`, its page and its action, only for a user with the role `admin`
 * (`requireRole("admin")`: anonymous to `/login`, 403 without the role); `/board`, its pages, its
 * event stream and its actions, only for a signed-in user (`requireUser()`); a delete racing
 * another user's move still deletes, and one racing another's delete writes no second entry; over
 * a real connection too. A call made by hand that sends a string where an action takes its form is
 * a 400 (`formOf`), never a failure. Users are signed in by the test kit (`signInAs`): the forms
 * themselves are e2e/users_test.ts's. Goes with the example.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { fileURLToPath } from "node:url";
import manifest from "@/_build/manifest.gen.ts";
import { join, logIn } from "@/routes/_auth/actions.ts";
import { sign } from "@/routes/_guestbook/actions.ts";
import { addEntry } from "@/routes/_guestbook/entries.ts";
import { publish } from "@/routes/_headline/actions.ts";
import { deleteAccount } from "@/routes/account/_actions.ts";
import { whoAmI } from "@/routes/admin/_actions.ts";
import { addTask, confirmDelete, moveTask, removeTask } from "@/routes/board/_tasks/actions.ts";
import { activity, KEPT } from "@/routes/board/_tasks/activity.ts";
import { tasks } from "@/routes/board/_tasks/tasks.ts";
import { createUser, getUser } from "shell/auth";
import { createApp } from "shell/server";
import { TestClient } from "shell/testing";
import { addAdmin, ADMIN } from "./users.ts";

// Where `static/` and the build's assets are: the project root.
const root = fileURLToPath(new URL("../..", import.meta.url));
const kv = await Deno.openKv(":memory:");
const app = createApp(manifest, { root, kv });

Deno.test("every example page renders; an unknown post is the 404 page", async () => {
  const client = new TestClient(app);
  const pages: [string, string][] = [
    ["/counter", '<output aria-live="polite">3</output>'],
    ["/streaming", "Sunny, with a chance of hydration."],
    ["/list", "<strong>100</strong>"],
    ["/blog/hello-world", "<h1>Hello, world</h1>"],
    ["/docs/getting/started", "<code>getting/started</code>"],
    ["/about", "<code>routes/(info)/about.tsx</code>"],
    ["/guestbook", "<h1>A guestbook</h1>"],
    ["/signup", "<h1>Sign up</h1>"],
    ["/login", "<h1>Log in</h1>"],
  ];
  for (const [path, shown] of pages) {
    const res = await client.get(path);
    assert.equal(res.status, 200, path);
    assert.ok((await res.text()).includes(shown), `${path} shows ${shown}`);
  }
  assert.ok((await (await client.get("/api/time")).json()).now);
  // The names every object has are no posts either (`/blog/constructor` was an empty one, 200).
  for (const slug of ["no-such-post", "constructor", "toString", "hasOwnProperty"]) {
    const missing = await client.get(`/blog/${slug}`);
    assert.equal(missing.status, 404, slug);
    await missing.body?.cancel();
  }
});

Deno.test("the guestbook's form, without JavaScript: its errors, then the signing", async () => {
  const client = new TestClient(app);
  const refused = await client.submit("/guestbook", {
    fields: { name: "", message: "hi" },
    follow: true,
  });
  const html = await refused.text();
  assert.match(html, /<p id="name-error" class="field-error">Please tell us your name\.<\/p>/);
  assert.match(html, /<textarea name="message"[^>]*>hi<\/textarea>/);

  const signed = await client.submit("/guestbook", {
    fields: { name: "Ada", message: "Signed in a test." },
    follow: true,
  });
  assert.match(await signed.text(), /<q>Signed in a test\.<\/q>/);
});

Deno.test("a log-in refused without JavaScript brings the email back, never the password", async () => {
  const client = new TestClient(app);
  const [email, password] = ["nobody.here@example.com", "not-the-password-8e1f"];
  const posted = await client.submit("/login", { fields: { email, password } });
  await posted.body?.cancel();
  assert.equal(posted.status, 303);
  // The form state rides in the cookie (signed, not encrypted): the password is not in it at all.
  const cookie = posted.headers.getSetCookie().find((line) => line.startsWith("app-form-state="));
  assert.ok(cookie, "the form's state is flashed");
  const payload = cookie.slice("app-form-state=".length).split(";")[0].split(".")[0];
  const flashed = Buffer.from(payload, "base64url").toString();
  assert.ok(flashed.includes(email), flashed);
  assert.ok(!flashed.includes(password), flashed);
  const page = await (await client.get(posted.headers.get("location")!)).text();
  assert.match(page, /Wrong email or password\./);
  assert.ok(page.includes(`value="${email}"`), "the email is back in its field");
  assert.ok(!page.includes(password));
});

Deno.test("the guestbook shows as many entries as GUESTBOOK_SHOWN says: 5 unless set", async () => {
  using store = await Deno.openKv(":memory:");
  for (let i = 1; i <= 7; i++) await addEntry(store, { name: "Ada", message: `Entry ${i}.` });
  const shown = async (settings?: { GUESTBOOK_SHOWN: number }) => {
    const app = createApp(manifest, { root, kv: store, settings });
    const page = await (await app.request("/guestbook")).text();
    await app.close();
    return [...page.matchAll(/<q>Entry (\d)\.<\/q>/g)].map((match) => match[1]);
  };
  assert.deepEqual(await shown(), ["7", "6", "5", "4", "3"]);
  assert.deepEqual(await shown({ GUESTBOOK_SHOWN: 2 }), ["7", "6"]);
});

Deno.test("/admin and its action: only for the role admin", async () => {
  const anonymous = new TestClient(app);
  const page = await anonymous.request("/admin");
  await page.body?.cancel();
  assert.equal(page.status, 303); // to the login page, and back after
  assert.equal(page.headers.get("location"), "/login?next=%2Fadmin");
  // A call from a script: refused before the action runs.
  const refused = await anonymous.call(whoAmI).catch((error) => error);
  assert.equal(refused.status, 401);
  assert.equal(refused.message, "Sign in to continue.");

  // A user without the role, signed in by the test kit (the forms themselves: e2e/users_test.ts).
  await createUser(kv, { email: "member@example.com", password: "unused by these tests" });
  const member = new TestClient(app);
  await member.signInAs("member@example.com");
  const account = await member.get("/account");
  assert.match(await account.text(), /Signed in as <strong>member@example.com<\/strong>/);
  const forbidden = await member.get("/admin");
  assert.equal(forbidden.status, 403);
  assert.match(
    await forbidden.text(),
    /<h1>Your account does not have access to this page\.<\/h1>/,
  );
  assert.equal((await member.call(whoAmI).catch((error) => error)).status, 403);

  // The admin: /admin, where the action knows them.
  await addAdmin(kv);
  const admin = new TestClient(app);
  await admin.signInAs(ADMIN.email);
  const landed = await admin.get("/admin");
  assert.equal(landed.status, 200);
  assert.match(await landed.text(), /<h1>Admin<\/h1>/);
  assert.equal(await admin.call(whoAmI), ADMIN.email);
});

Deno.test("/account's Delete account: confirmed by the email typed, the user signed out everywhere, gone, the email free", async () => {
  // Signing up again goes through the form: one hash, given the time it takes on a loaded machine.
  const patient = createApp(manifest, { root, kv, requestTimeoutMs: 0 });
  const leaving = { email: "leaving@example.com", password: "unused by these tests" };
  const user = await createUser(kv, leaving);
  const client = new TestClient(patient);
  const other = new TestClient(patient); // another device of theirs
  await client.signInAs(user);
  await other.signInAs(user);
  const page = await (await client.get("/account")).text();
  assert.match(page, /<button type="submit">Delete account<\/button>/);

  // Not confirmed (another email typed): nothing deleted. Before, there was no such form.
  const unconfirmed = await client.submit("/account", {
    form: deleteAccount,
    fields: { confirm: "someone@example.com" },
  });
  assert.equal(unconfirmed.status, 400);
  assert.match(await unconfirmed.text(), /Type your email exactly to confirm/);
  assert.deepEqual(await getUser(kv, user.id), user);

  const deleted = await client.submit("/account", {
    form: deleteAccount,
    fields: { confirm: " Leaving@Example.com " },
  });
  await deleted.body?.cancel();
  assert.equal(deleted.status, 303);
  assert.equal(deleted.headers.get("location"), "/");
  // Signed out here and on the other device; the record gone.
  for (const device of [client, other]) {
    const account = await device.request("/account");
    await account.body?.cancel();
    assert.equal(account.status, 303);
    assert.equal(account.headers.get("location"), "/login?next=%2Faccount");
  }
  assert.equal(await getUser(kv, user.id), null);
  assert.deepEqual(await keysOf(["auth", "user_sessions", user.id]), []);
  assert.deepEqual(await keysOf(["auth", "emails", user.email]), []);

  // Clicked twice: the second post may pass the guard before the first ends the sessions, and
  // then find the user gone. It lands on / too (or on the login page). Before, deleteUser's
  // UnknownUserError answered it with "Page not found". Which way the two interleave varies (each
  // way was seen on the old code): a few users make the one that failed likely.
  for (let i = 0; i < 8; i++) {
    const twice = await createUser(kv, { email: `twice${i}@example.com`, password: "unused" });
    await client.signInAs(twice);
    const posts = await Promise.all(
      [1, 2].map(() =>
        client.submit("/account", { form: deleteAccount, fields: { confirm: twice.email } })
      ),
    );
    for (const post of posts) {
      await post.body?.cancel();
      assert.equal(post.status, 303);
      assert.match(post.headers.get("location") ?? "", /^\/(login\?next=%2Faccount)?$/);
    }
    assert.equal(await getUser(kv, twice.id), null);
  }

  // The email is free: signing up with it makes a new account.
  const again = new TestClient(patient);
  const joined = await again.submit("/signup", {
    fields: { email: leaving.email, password: "a new long passphrase" },
    follow: true,
  });
  assert.match(await joined.text(), /Signed in as <strong>leaving@example\.com<\/strong>/);
});

/** The keys under `prefix`, or the key itself when it holds a value. */
async function keysOf(prefix: Deno.KvKey): Promise<Deno.KvKey[]> {
  const keys: Deno.KvKey[] = [];
  if ((await kv.get(prefix)).versionstamp !== null) keys.push(prefix);
  for await (const { key } of kv.list({ prefix })) keys.push(key);
  return keys;
}

Deno.test("/board: its pages, stream and actions only for a signed-in user", async () => {
  const anonymous = new TestClient(app);
  for (const path of ["/board", "/board/delete?task=t1"]) {
    const page = await anonymous.request(path);
    await page.body?.cancel();
    assert.equal(page.status, 303, path); // to the login page, and back after
    assert.equal(page.headers.get("location"), `/login?next=${encodeURIComponent(path)}`);
  }
  const stream = await anonymous.request("/board/events");
  assert.equal(stream.status, 401);
  assert.deepEqual(await stream.json(), {
    error: { status: 401, message: "Sign in to continue." },
  });
  // An island's calls: each refused before the action runs, as an expected error, never a 500.
  const form = formOf({ title: "Sneaked in", id: "t1", state: "done" });
  const calls = [
    () => anonymous.call(addTask, {}, form),
    () => anonymous.call(moveTask, {}, form),
    () => anonymous.call(removeTask, {}, form),
    () => anonymous.call(confirmDelete, form),
  ];
  for (const call of calls) {
    const refused = await call().catch((error) => error);
    assert.equal(refused.name, "ActionError");
    assert.equal(refused.status, 401);
    assert.equal(refused.message, "Sign in to continue.");
  }

  // Any user may use the board.
  await createUser(kv, { email: "board@example.com", password: "unused by these tests" });
  const member = new TestClient(app);
  await member.signInAs("board@example.com");
  const board = await member.get("/board");
  assert.equal(board.status, 200);
  assert.equal(board.headers.get("cache-control"), "private, no-cache");
  assert.match(await board.text(), /<h1>Task board<\/h1>/);

  // The board's form, as the signed-in page rendered it, posted without JavaScript once the
  // session is gone (signed out in another tab): to /login, and back to the board after.
  const stale = await member.submit("/board", {
    form: addTask,
    fields: { title: "Sneaked in" },
    headers: { Cookie: "" },
  });
  assert.equal(stale.status, 303);
  assert.equal(stale.headers.get("location"), "/login?next=%2Fboard");
  assert.deepEqual((await tasks.snapshot(kv)).items, [], "no action ran signed out");

  // Signed in, the same form adds the task.
  const added = await member.submit("/board", {
    form: addTask,
    fields: { title: "Water the plants" },
    follow: true,
  });
  assert.match(await added.text(), /Water the plants/);
  const [task] = (await tasks.snapshot(kv)).items;
  assert.equal(task.value.title, "Water the plants");
  const { moved } = await member.call(moveTask, {}, formOf({ id: task.id, state: "doing" }));
  assert.equal(moved?.value.state, "doing");
  // Each change and its activity entry are one commit: a refused one writes neither.
  const refused = await member.call(addTask, {}, formOf({ title: "x".repeat(121) }));
  assert.deepEqual(refused.errors?.title, ["120 characters at most."]);
  await assert.rejects(
    member.call(moveTask, {}, formOf({ id: task.id, state: "lost" })),
    (error: Error & { status?: number }) => error.status === 422,
  );
  const { removed } = await member.call(removeTask, {}, formOf({ id: task.id }));
  assert.ok(removed?.versionstamp);
  const entries = (await activity.list(kv)).items.map(({ value }) => value);
  assert.deepEqual(
    entries.map(({ task, title, did, by }) => ({ task, title, did, by })),
    ["added", "doing", "deleted"].map((did) => ({
      task: task.id,
      title: "Water the plants",
      did,
      by: "board",
    })),
  );
  assert.deepEqual((await tasks.snapshot(kv)).items, []);
  const latest = await (await member.get("/board")).text();
  assert.match(latest, /<li>board deleted “Water the plants”<\/li>/);
  assert.match(latest, /<li>board moved “Water the plants” to Doing<\/li>/);
  const live = await member.request("/board/events");
  assert.equal(live.status, 200);
  assert.match(live.headers.get("content-type")!, /^text\/event-stream/);
  await live.body?.cancel();
});

/**
 * A board on its own store whose next `races` reads of task `id` each let `meanwhile` (another
 * user's change) happen after the read and before the action's commit: the race, every time.
 */
async function racedBoard(
  meanwhile: (store: Deno.Kv, id: string) => Promise<unknown>,
  races = 1,
) {
  const store = await Deno.openKv(":memory:");
  const app = createApp(manifest, { root, kv: store });
  await createUser(store, { email: "racer@example.com", password: "unused by these tests" });
  const member = new TestClient(app);
  await member.signInAs("racer@example.com");
  const { added } = await member.call(addTask, {}, formOf({ title: "Water the plants" }));
  const id = added!.id;
  const get = store.get.bind(store);
  let raced = 0;
  store.get = (async (key: Deno.KvKey, options?: { consistency?: Deno.KvConsistencyLevel }) => {
    const read = await get(key, options);
    if (raced < races && key.includes(id)) {
      raced++;
      await meanwhile(store, id);
    }
    return read;
  }) as typeof store.get;
  const deleted = () =>
    activity.list(store).then(({ items }) => items.filter(({ value }) => value.did === "deleted"));
  return {
    id,
    store,
    member,
    deleted,
    raced: () => raced,
    async [Symbol.asyncDispose]() {
      await app.close();
      store.close();
    },
  };
}

Deno.test("a task moved by another user while it is deleted is deleted all the same, its entry naming its title", async () => {
  await using board = await racedBoard((store, id) => tasks.update(store, id, { state: "doing" }));
  // Before: the versionstamp read was pinned, and the user who asked to delete got a 409.
  const { removed } = await board.member.call(removeTask, {}, formOf({ id: board.id }));
  assert.ok(removed?.versionstamp);
  assert.equal(await tasks.get(board.store, board.id), null);
  assert.deepEqual((await board.deleted()).map(({ value }) => value.title), ["Water the plants"]);
});

Deno.test("a task moved by others before each of the delete's tries: 409 after the third, the task kept, no entry", async () => {
  const states = ["doing", "done", "todo"] as const;
  let moves = 0;
  await using board = await racedBoard(
    (store, id) => tasks.update(store, id, { state: states[moves++ % states.length] }),
    100,
  );
  const refused = await board.member.call(removeTask, {}, formOf({ id: board.id }))
    .catch((error) => error);
  assert.equal(refused.name, "ActionError");
  assert.equal(refused.status, 409);
  assert.match(refused.message, /changed meanwhile .*reload and try again/);
  // Three reads, each lost to a move: the cap, not a loop until the others stop.
  assert.equal(board.raced(), 3);
  assert.equal((await tasks.get(board.store, board.id))?.value.state, "todo");
  assert.deepEqual(await board.deleted(), []);
});

Deno.test("a task deleted by another user while it is deleted again: null, and no second entry", async () => {
  await using board = await racedBoard((store, id) => tasks.delete(store, id));
  const { removed } = await board.member.call(removeTask, {}, formOf({ id: board.id }));
  assert.equal(removed?.versionstamp, null);
  // Before: an entry "deleted" for a task this user's commit found gone.
  assert.deepEqual(await board.deleted(), []);
});

Deno.test("the board's activity keeps its latest KEPT entries: each change's commit deletes the older", async () => {
  using store = await Deno.openKv(":memory:");
  const app = createApp(manifest, { root, kv: store });
  await createUser(store, { email: "busy@example.com", password: "unused by these tests" });
  const member = new TestClient(app);
  await member.signInAs("busy@example.com");
  for (let i = 1; i <= KEPT + 3; i++) {
    await member.call(addTask, {}, formOf({ title: `Task ${i}` }));
  }
  const { items } = await activity.list(store, { limit: 100 });
  // Before: every entry ever written, KEPT + 3 here, and growing with each change.
  assert.equal(items.length, KEPT);
  assert.deepEqual(
    items.map(({ value }) => value.title),
    Array.from({ length: KEPT }, (_, i) => `Task ${i + 4}`),
  );
  await app.close();
});

Deno.test("a call by hand without the form its action takes: 400 not_a_form, never a failure", async () => {
  const user = await createUser(kv, {
    email: "by-hand@example.com",
    password: "unused by these tests",
  });
  const member = new TestClient(app);
  await member.signInAs(user);
  const text = "not a form" as unknown as FormData;
  const calls = [
    () => member.call(addTask, {}, text),
    () => member.call(moveTask, {}, text),
    () => member.call(removeTask, {}, text),
    () => member.call(confirmDelete, text),
    () => member.call(deleteAccount, text),
    () => member.call(publish, text),
    () => member.call(sign, {}, text),
    () => new TestClient(app).call(join, {}, text),
    () => new TestClient(app).call(logIn, {}, text),
  ];
  for (const [i, call] of calls.entries()) {
    const refused = await call().catch((error) => error);
    assert.equal(refused?.name, "ActionError", `call ${i}: ${refused}`);
    assert.deepEqual([refused.status, refused.code], [400, "not_a_form"], `call ${i}`);
  }
  assert.deepEqual(await getUser(kv, user.id), user, "the account is still there");
});

Deno.test("over a real connection", async () => {
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  const client = new TestClient(`http://127.0.0.1:${server.addr.port}`);
  const res = await client.get("/api/time");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^application\/json/);
  assert.ok((await res.json()).now);
  app.close();
});

Deno.test("navigation: pages carry speculation rules; the stylesheet turns view transitions on", async () => {
  const client = new TestClient(app);
  // An example page, not the home page or the document: a team's first day makes those its own.
  const html = await (await client.get("/list")).text();
  assert.match(html, /<script type="speculationrules" nonce="[^"]+">\{"prerender"/);
  const css = await Deno.readTextFile(new URL("../../routes/app.css", import.meta.url));
  assert.match(css, /@view-transition\s*\{\s*navigation:\s*auto;\s*\}/);
});

function formOf(fields: Record<string, string>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  return form;
}
