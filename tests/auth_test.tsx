/**
 * @module
 * `shell/auth` in-process, on an app of the tests' own (`helpers/auth.tsx`), through the test kit's
 * `TestClient` (a browser's cookie jar): the session cookie
 * and what the store keeps of it, the guards (303 to the login page with `next`, 401 JSON, 403
 * through `_error.tsx`, for pages, API routes and actions), a new token at every sign-in, sign-out
 * here and everywhere, a change of roles ending sessions, the cost of reading a session (KV reads
 * and writes counted), idle and absolute expiry on a clock of the test's, the limits (429 with
 * `Retry-After`, no hash spent), the same answer for an unknown email and a wrong password, and
 * the bound on hashes at once (503 with `Retry-After`, also for a hash that would wait past the
 * request's deadline: never a 500). Tests whose subject is not signing in (the guards, sessions,
 * sign-out, expiry) sign in with the kit's `signInAs`: no password hash, no sign-in limit.
 */
import assert from "node:assert/strict";
import type { AuthOptions } from "../lib/auth.ts";
import {
  createUser,
  deleteUser,
  getUser,
  normalizeEmail,
  requireRole,
  setRoles,
  signUp,
  UnknownUserError,
  UserExistsError,
} from "../lib/auth.ts";
import { isHttpError, requestContext } from "../lib/mod.ts";
import { limiter } from "../lib/auth/limiter.ts";
import { hashesBegun } from "../lib/auth/password.ts";
import { sessionsOf } from "../lib/auth/sessions.ts";
import { isToken, tokenHash } from "../lib/auth/token.ts";
import { captureLogs, TestClient } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";
import { tempStore } from "./helpers/kv.ts";
import {
  type ActionAnswer,
  actionIds,
  authFiles,
  callAction,
  credentials,
  STORED_PASSWORD,
  storedUser,
} from "./helpers/auth.tsx";

/** The password of the users the tests store (`storedUser`), and of the ones they sign up. */
const PASSWORD = STORED_PASSWORD;
/** Limits no test reaches but the one that tests them. */
const ROOMY = {
  signInPerClient: { limit: 1000, windowMs: 60_000 },
  signInPerAccount: { limit: 1000, windowMs: 60_000 },
  signUpPerClient: { limit: 1000, windowMs: 60_000 },
};

interface Counted {
  reads: number;
  writes: number;
}

/** A store that counts what requests do to it: reads (`get`, `getMany`) and commits. */
function countingKv(kv: Deno.Kv): { kv: Deno.Kv; counted: Counted } {
  const counted = { reads: 0, writes: 0 };
  const proxy = new Proxy(kv, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name === "get" || name === "getMany") {
        return (...args: unknown[]) => {
          counted.reads++;
          return value.apply(target, args);
        };
      }
      if (name === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => {
            counted.writes++;
            return commit();
          };
          return op;
        };
      }
      if (name === "set" || name === "delete") {
        return (...args: unknown[]) => {
          counted.writes++;
          return value.apply(target, args);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: proxy, counted };
}

async function setup(auth: AuthOptions = {}, origins?: string[]) {
  const store = await Deno.openKv(":memory:");
  const { kv, counted } = countingKv(store);
  const app = memoryApp(authFiles(), { kv, origins, auth: { ...ROOMY, ...auth } });
  return {
    store,
    kv,
    counted,
    /** A browser of its own: a client with an empty cookie jar. */
    browser: () => new TestClient(app),
    async signUp(client: TestClient, email: string, password = PASSWORD) {
      const call = await callAction(client, actionIds.join, [credentials(email, password)]);
      assert.equal(call.status, 200, call.text);
      assert.equal(call.answer?.errors, undefined);
      return call;
    },
    async signIn(client: TestClient, email: string, password = PASSWORD) {
      return await callAction(client, actionIds.logIn, [credentials(email, password)]);
    },
    [Symbol.dispose]: () => store.close(),
  };
}

/** The session token in the client's jar, if any. */
const tokenIn = (client: TestClient) => client.cookie("session");
/** The tokens of a device cookie (`.`-separated, latest first; `token~tag` as first written). */
const deviceTokens = (cookie: string | undefined) =>
  (cookie ?? "").split(".").map((entry) => entry.split("~")[0]);

Deno.test("signing up sets the session cookie: the token only, HttpOnly, SameSite=Lax, Path=/", async () => {
  using t = await setup();
  const client = t.browser();
  const { res } = await t.signUp(client, "  Ada@Example.COM ");
  const [cookie, mark] = res.headers.getSetCookie();
  assert.match(
    cookie,
    /^session=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax$/,
  );
  assert.doesNotMatch(cookie, /Secure|Domain/);
  // The session's mark, for a page restored from the back/forward cache: script may read it.
  assert.match(mark, /^session-mark=[0-9a-z]{1,12}; Max-Age=604800; Path=\/; SameSite=Lax$/);

  const token = (await tokenIn(client))!;
  const dump: string[] = [];
  for await (const entry of t.store.list({ prefix: [] })) {
    dump.push(JSON.stringify(entry.key) + JSON.stringify(entry.value));
  }
  const text = dump.join("\n");
  assert.ok(text.includes(tokenHash(token)), "the store keeps the token's hash");
  assert.ok(!text.includes(token), "and never the token");
  assert.ok(!text.includes(PASSWORD), "nor the password");
  assert.match(text, /"\$scrypt\$ln=15,r=8,p=3\$/);
  assert.ok(text.includes('"ada@example.com"'), "the email, normalised");
});

Deno.test("over https (the app's configured origin) the cookies are __Host- and Secure", async () => {
  using t = await setup({}, ["https://app.example"]);
  const client = t.browser();
  const { res } = await callAction(
    client,
    actionIds.join,
    [credentials("grace@example.com", PASSWORD)],
    { origin: "https://app.example" },
  );
  const [cookie] = res.headers.getSetCookie();
  assert.match(
    cookie,
    /^__Host-session=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
  );
  // Read back under its prefixed name.
  assert.ok(await client.cookie("__Host-session", "https://app.example/"));
  // The browser, known for the account from now on (devices.ts): the same flags, for 30 days.
  const device = res.headers.getSetCookie().find((set) => set.startsWith("__Host-device="));
  assert.match(
    device ?? "",
    /^__Host-device=[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
  );
  assert.ok(await client.cookie("__Host-device", "https://app.example/"));
  const page = await client.request("https://app.example/account");
  assert.equal(page.status, 200);
  assert.match(await page.text(), /Signed in as <b>grace@example.com<\/b>/);
});

Deno.test("requireUser: pages, API routes and actions alike", async (t) => {
  using app = await setup();
  const anonymous = app.browser();

  await t.step("an anonymous page view: 303 to /login with its path and query", async () => {
    const res = await anonymous.request("/account?tab=keys&x=%2F");
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/login?next=%2Faccount%3Ftab%3Dkeys%26x%3D%252F");
  });

  await t.step("an anonymous API route, or a request that wants JSON: 401 JSON", async () => {
    for (const [path, accept] of [["/account/data", "*/*"], ["/account", "application/json"]]) {
      const res = await anonymous.request(path, { headers: { Accept: accept } });
      assert.equal(res.status, 401, path);
      assert.deepEqual(await res.json(), {
        error: { status: 401, message: "Sign in to continue." },
      });
    }
  });

  await t.step("an anonymous action call: 401 JSON, and the action never runs", async () => {
    const call = await callAction(anonymous, actionIds.whoAmI, []);
    assert.equal(call.status, 401);
    assert.deepEqual(JSON.parse(call.text), {
      error: { status: 401, message: "Sign in to continue." },
    });
  });

  await t.step(
    "an anonymous form posted without JavaScript: to /login, back to its page",
    async () => {
      const res = await anonymous.request(`/_action/${actionIds.whoAmI}`, {
        method: "POST",
        body: new FormData(),
        headers: {
          Origin: anonymous.origin,
          Referer: `${anonymous.origin}/account/settings?a=1`,
          Accept: "text/html",
        },
      });
      assert.equal(res.status, 303);
      assert.equal(res.headers.get("location"), "/login?next=%2Faccount%2Fsettings%3Fa%3D1");
    },
  );

  await t.step("signed in: the page, the API route and the action, with state.user", async () => {
    const client = app.browser();
    await client.signInAs(await storedUser(app.kv, "lin@example.com"));
    const page = await client.request("/account");
    assert.equal(page.status, 200);
    // Revalidated by the browser, kept by no shared cache, eligible for the back/forward cache.
    assert.equal(page.headers.get("cache-control"), "private, no-cache");
    const html = await page.text();
    // Restored from the back/forward cache, it loads anew unless its session's mark is still set.
    const nonce = /'nonce-([^']+)'/.exec(page.headers.get("content-security-policy")!)![1];
    const mark = await client.cookie("session-mark");
    assert.ok(mark, "the browser holds the mark");
    assert.ok(
      html.includes(
        `<script nonce="${nonce}">addEventListener("pageshow",function(e){if(e.persisted&&` +
          `!document.cookie.split("; ").includes("session-mark=${mark}"))`,
      ),
      html.slice(0, 3000),
    );
    assert.match(html, /Signed in as <b>lin@example.com<\/b>\. <!-- -->Hello, lin/);
    // The state is the app's alone: what its middleware set, none of the framework's keys.
    assert.match(html, /Keys:<!-- --> <i>greeting,user<\/i>/);
    const api = await client.request("/account/data");
    assert.deepEqual(await api.json(), { email: "lin@example.com" });
    // As an island calls it, through the test kit: the value alone.
    const answer = await client.call<[], ActionAnswer>(`/_action/${actionIds.whoAmI}`);
    assert.deepEqual(answer, { email: "lin@example.com" });
  });
});

Deno.test("requireRole: 403 through _error.tsx without the role, the page with it", async () => {
  using t = await setup();
  const client = t.browser();
  await client.signInAs(await storedUser(t.kv, "member@example.com"));
  const refused = await client.request("/admin");
  assert.equal(refused.status, 403);
  const refusal = await refused.text();
  assert.match(refusal, /<h1>403<!-- -->: <!-- -->Your account does not have access/);
  // Who is refused, so the page can say which account lacks the role (and offer another).
  assert.match(refusal, /<p>Signed in as <!-- -->member@example\.com<\/p>/);
  assert.equal(
    refused.headers.get("cache-control"),
    "private, no-cache",
    "a signed-in user's page",
  );
  const json = await client.request("/admin", { headers: { Accept: "application/json" } });
  assert.equal(json.status, 403);
  await json.body?.cancel();
  const anonymous = await t.browser().request("/admin");
  assert.equal(anonymous.status, 303);
  assert.equal(anonymous.headers.get("location"), "/login?next=%2Fadmin");

  const admin = t.browser();
  await admin.signInAs(await storedUser(t.kv, "root@example.com", { roles: ["admin"] }));
  const page = await admin.request("/admin");
  assert.equal(page.status, 200);
  assert.match(await page.text(), /Admin <!-- -->root@example.com/);
});

Deno.test("signing in issues a new token and ends the request's old session", async () => {
  using t = await setup();
  const client = t.browser();
  await client.signInAs(await storedUser(t.kv, "fix@example.com"));
  const first = (await tokenIn(client))!;
  // An attacker's planted cookie, or the victim's own: either way a new token replaces it.
  assert.equal((await t.signIn(client, "fix@example.com")).status, 200);
  const second = (await tokenIn(client))!;
  assert.notEqual(second, first);
  const old = await t.browser().request("/account", {
    headers: { Cookie: `session=${first}` },
  });
  assert.equal(old.status, 303, "the old token signs nobody in");
  assert.deepEqual(old.headers.getSetCookie(), [
    "session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax",
  ]);
  assert.equal((await client.request("/account")).status, 200);
});

Deno.test("signing out ends the session; signing out everywhere ends all of the user's", async () => {
  using t = await setup();
  const [laptop, phone, tablet] = [t.browser(), t.browser(), t.browser()];
  const many = await storedUser(t.kv, "many@example.com");
  for (const client of [laptop, phone, tablet]) await client.signInAs(many);
  const phoneToken = (await tokenIn(phone))!;

  const out = await callAction(phone, actionIds.logOut, []);
  assert.equal(out.status, 200);
  assert.equal(await tokenIn(phone), undefined, "the cookie is cleared");
  // The browser forgets the pages it kept (signed-in pages are `private, no-cache`), and the mark.
  assert.equal(out.res.headers.get("clear-site-data"), '"cache"');
  assert.ok(out.res.headers.getSetCookie().some((c) => /^session-mark=; Max-Age=0/.test(c)));
  const replayed = await t.browser().request("/account", {
    headers: { Cookie: `session=${phoneToken}` },
  });
  assert.equal(replayed.status, 303, "the session is over, whatever the browser kept");
  assert.equal((await laptop.request("/account")).status, 200, "the others go on");

  const everywhere = await callAction(laptop, actionIds.logOutEverywhere, []);
  assert.deepEqual(everywhere.answer, { ended: 2 });
  assert.equal(everywhere.res.headers.get("clear-site-data"), '"cache"');
  assert.equal((await tablet.request("/account")).status, 303);
  const left = [];
  for await (const entry of t.store.list({ prefix: ["auth", "user_sessions"] })) left.push(entry);
  for await (const entry of t.store.list({ prefix: ["auth", "sessions"] })) left.push(entry);
  assert.deepEqual(left, [], "sessions and their index entries went together");
});

/** Every entry under `prefix`, as `key → value` JSON lines. */
async function entries(kv: Deno.Kv, prefix: Deno.KvKey): Promise<Deno.KvEntry<unknown>[]> {
  const found = [];
  for await (const entry of kv.list({ prefix })) found.push(entry);
  return found;
}

Deno.test("signInAs: a real session without a password, as the form's, behind every guard", async () => {
  using t = await setup();
  const member = await storedUser(t.kv, "member@example.com");
  await storedUser(t.kv, "root@example.com", { roles: ["admin"] });

  const client = t.browser();
  assert.deepEqual(await client.signInAs(member), member);
  // requireUser(): the page (currentUser asked again in its handler), the API route, the action.
  const page = await client.request("/account");
  assert.equal(page.status, 200);
  assert.equal(page.headers.get("x-again"), "member@example.com");
  assert.match(
    await page.text(),
    /Signed in as <b>member@example.com<\/b>\. <!-- -->Hello, member/,
  );
  assert.deepEqual(await (await client.request("/account/data")).json(), {
    email: "member@example.com",
  });
  assert.deepEqual(await client.call<[], ActionAnswer>(`/_action/${actionIds.whoAmI}`), {
    email: "member@example.com",
  });
  // requireRole("admin"): refused without the role, through _error.tsx.
  const refused = await client.request("/admin");
  assert.equal(refused.status, 403);
  assert.match(await refused.text(), /Your account does not have access/);

  // By email too (normalised), with the roles as stored.
  const admin = t.browser();
  assert.deepEqual((await admin.signInAs(" ROOT@example.com")).roles, ["admin"]);
  const adminPage = await admin.request("/admin");
  assert.equal(adminPage.status, 200);
  assert.match(await adminPage.text(), /Admin <!-- -->root@example.com/);

  // What the store holds is what a sign-in through the form leaves: the same record, the same
  // expiry, an index entry; the cookie holds only the token, and the mark beside it.
  const viaForm = t.browser();
  assert.equal((await t.signIn(viaForm, "member@example.com")).status, 200);
  const recordOf = async (browser: TestClient) => {
    const token = (await tokenIn(browser))!;
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    return (await t.store.get<Record<string, unknown>>(["auth", "sessions", tokenHash(token)]))
      .value!;
  };
  const [mine, theirs] = [await recordOf(client), await recordOf(viaForm)];
  const shape = (record: Record<string, unknown>) => ({
    ...record,
    createdAt: typeof record.createdAt,
    seenAt: typeof record.seenAt,
    lasts: Number(record.expiresAt) - Number(record.createdAt),
    expiresAt: undefined,
  });
  assert.deepEqual(shape(mine), shape(theirs));
  assert.equal(shape(mine).lasts, 7 * 24 * 3_600_000);
  assert.equal((await entries(t.store, ["auth", "user_sessions", member.id])).length, 2);
  assert.equal(await client.cookie("session-mark"), Number(mine.createdAt).toString(36));
});

Deno.test("signInAs: signing out through the real action, and out everywhere, ends its session", async () => {
  using t = await setup();
  const many = await storedUser(t.kv, "many@example.com");
  const [laptop, phone, tablet] = [t.browser(), t.browser(), t.browser()];
  await laptop.signInAs(many);
  await phone.signInAs(many);
  assert.equal((await t.signIn(tablet, "many@example.com")).status, 200);
  const phoneToken = (await tokenIn(phone))!;

  const out = await callAction(phone, actionIds.logOut, []);
  assert.equal(out.status, 200);
  assert.equal(await tokenIn(phone), undefined, "the cookie is cleared");
  assert.equal((await phone.request("/account")).status, 303, "signed out");
  const replayed = await t.browser().request("/account", {
    headers: { Cookie: `session=${phoneToken}` },
  });
  assert.equal(replayed.status, 303, "the session is over in the store, not only in the jar");
  assert.equal((await laptop.request("/account")).status, 200, "the others go on");

  const everywhere = await callAction(tablet, actionIds.logOutEverywhere, []);
  assert.deepEqual(everywhere.answer, { ended: 2 });
  assert.equal((await laptop.request("/account")).status, 303);
  assert.deepEqual(await entries(t.store, ["auth", "sessions"]), []);
  assert.deepEqual(await entries(t.store, ["auth", "user_sessions"]), []);
});

Deno.test("signInAs: a new token every time, the client's old session ended as at a sign-in", async () => {
  using t = await setup({ sessionsPerUser: 2 });
  const ada = await storedUser(t.kv, "ada@example.com");
  const client = t.browser();
  await client.signInAs(ada);
  const first = (await tokenIn(client))!;
  await client.signInAs(ada);
  const second = (await tokenIn(client))!;
  assert.notEqual(second, first);
  const old = await t.browser().request("/account", { headers: { Cookie: `session=${first}` } });
  assert.equal(old.status, 303, "the old token signs nobody in");
  assert.equal((await client.request("/account")).status, 200);
  // The per-user bound holds too: a third client's session ends the oldest.
  const [other, third] = [t.browser(), t.browser()];
  await other.signInAs(ada);
  await third.signInAs(ada);
  assert.equal((await client.request("/account")).status, 303);
  assert.equal((await third.request("/account")).status, 200);
});

Deno.test("signInAs hashes no password and counts against no sign-in limit", async () => {
  // Room for every session; a limit of 2 sign-ins an account, which 20 through the form would pass.
  using t = await setup({
    sessionsPerUser: 50,
    signInPerAccount: { limit: 2, windowMs: 60_000 },
  });
  // The seam counts every scrypt of this process: a user made, and a form's sign-in, are one each.
  let before = hashesBegun();
  const user = await createUser(t.kv, { email: "load@example.com", password: PASSWORD });
  assert.equal(hashesBegun() - before, 1, "createUser hashes once");
  before = hashesBegun();
  assert.equal((await t.signIn(t.browser(), "load@example.com")).status, 200);
  assert.equal(hashesBegun() - before, 1, "a sign-in through the form hashes once");

  before = hashesBegun();
  const clients = Array.from({ length: 20 }, () => t.browser());
  await Promise.all(clients.map((client) => client.signInAs(user)));
  assert.equal(hashesBegun() - before, 0, "20 sign-ins, no hash");
  // And none was refused (429): a sign-in limit guards passwords, and these guess none.
  const statuses = await Promise.all(
    clients.map(async (client) => (await client.request("/account/data")).status),
  );
  assert.deepEqual(new Set(statuses), new Set([200]));
});

Deno.test("signInAs over https: the __Host- cookie, for the app's public origin", async () => {
  using t = await setup({}, ["https://app.example"]);
  const grace = await storedUser(t.kv, "grace@example.com");
  const client = t.browser();
  await client.signInAs(grace);
  assert.ok(await client.cookie("__Host-session", "https://app.example/"));
  assert.equal(await client.cookie("session", "https://app.example/"), undefined);
  const page = await client.request("https://app.example/account");
  assert.equal(page.status, 200);
  assert.match(await page.text(), /Signed in as <b>grace@example.com<\/b>/);
});

Deno.test("signInAs to a server's origin over https: __Host- and Secure, as that server sets them", async () => {
  using t = await setup();
  const grace = await storedUser(t.kv, "grace@example.com");
  const client = new TestClient("https://app.example", { kv: t.kv });
  assert.deepEqual(await client.signInAs(grace), grace);
  const cookies = await client.cookies();
  assert.deepEqual(cookies.map(({ name, secure, httpOnly }) => ({ name, secure, httpOnly })), [
    { name: "__Host-session", secure: true, httpOnly: true },
    { name: "__Host-session-mark", secure: true, httpOnly: false },
  ]);
  // The session is in the store, under the token's hash, with the default week's expiry.
  const token = cookies[0].value;
  const record = (await t.store.get<{ createdAt: number; expiresAt: number }>([
    "auth",
    "sessions",
    tokenHash(token),
  ])).value!;
  assert.equal(record.expiresAt - record.createdAt, 7 * 24 * 3_600_000);
});

Deno.test("signInAs says why it cannot: no KV store, no such user, not an app of this process", async () => {
  const noStore = memoryApp(authFiles(), { kv: undefined });
  await assert.rejects(
    new TestClient(noStore).signInAs("ada@example.com"),
    /made without a KV store, so it has no users or sessions/,
  );
  using t = await setup();
  await assert.rejects(t.browser().signInAs("nobody@example.com"), {
    name: "RangeError",
    message: /No user has the email nobody@example.com/,
  });
  await assert.rejects(new TestClient("http://127.0.0.1:9").signInAs("ada@example.com"), {
    name: "TypeError",
    message: /signs in to http:\/\/127\.0\.0\.1:9 through the KV store it was started with/,
  });
  assert.throws(() => new TestClient(memoryApp(authFiles(), { kv: t.kv }), { kv: t.kv }), {
    name: "TypeError",
    message: /kv is for a server's origin/,
  });
  await assert.rejects(
    new TestClient("http://127.0.0.1:9", { kv: t.kv }).signInAs("nobody@example.com"),
    { name: "RangeError", message: /No user has the email nobody@example.com/ },
  );
  const app = memoryApp(authFiles(), { kv: t.kv });
  await assert.rejects(new TestClient({ request: app.request }).signInAs("ada@example.com"), {
    name: "TypeError",
    message: /an app made by createApp in this process/,
  });
});

Deno.test("a user keeps at most sessionsPerUser sessions: the oldest ends", async () => {
  using t = await setup({ sessionsPerUser: 2 });
  const browsers = [t.browser(), t.browser(), t.browser()];
  const few = await storedUser(t.kv, "few@example.com");
  for (const client of browsers) await client.signInAs(few);
  const statuses = [];
  for (const client of browsers) statuses.push((await client.request("/account")).status);
  assert.deepEqual(statuses, [303, 200, 200]);
});

Deno.test("sign-ins at the same moment may each keep one session more than sessionsPerUser; the next sign-in ends the extra", async () => {
  // The bound docs/users.md states: a sign-in ends the oldest beyond the limit as it listed them,
  // so sign-ins committing together (any workers) each keep theirs - at most one more each - and
  // the next sign-in ends every session beyond the limit.
  using t = await setup({ sessionsPerUser: 2 });
  const many = await storedUser(t.kv, "many@example.com");
  const AT_ONCE = 6;
  const browsers = Array.from({ length: AT_ONCE }, () => t.browser());
  await Promise.all(browsers.map((client) => client.signInAs(many)));
  const count = async () => (await sessionsOf(t.store, many.id)).length;
  const after = await count();
  assert.ok(after >= 2 && after <= 2 + AT_ONCE - 1, `${after} sessions`);
  await t.browser().signInAs(many);
  assert.equal(await count(), 2, "back to the limit");
});

Deno.test("sessions started in one millisecond: the oldest still ends first (by commit order)", async () => {
  const now = Date.now();
  using t = await setup({ sessionsPerUser: 2, now: () => now });
  const browsers = Array.from({ length: 6 }, () => t.browser());
  const tied = await storedUser(t.kv, "tied@example.com");
  for (const client of browsers) await client.signInAs(tied);
  const statuses = [];
  for (const client of browsers) statuses.push((await client.request("/account")).status);
  assert.deepEqual(statuses, [303, 303, 303, 303, 200, 200]);
});

Deno.test("a change of roles ends the user's sessions; the next sign-in has the new roles", async () => {
  using t = await setup();
  const client = t.browser();
  await client.signInAs(await storedUser(t.kv, "promoted@example.com"));
  assert.equal((await client.request("/admin")).status, 403);
  const user = await setRoles(t.kv, "Promoted@example.com", ["admin"]);
  assert.deepEqual(user.roles, ["admin"]);
  assert.equal((await client.request("/account")).status, 303, "signed out by the change");
  const before = await tokenIn(client);
  assert.deepEqual((await client.signInAs("promoted@example.com")).roles, ["admin"]);
  assert.notEqual(await tokenIn(client), before);
  assert.equal((await client.request("/admin")).status, 200);
});

Deno.test("roles taken away on another process while a sign-in checks the password: the new session has none", async () => {
  // Two handles on one file: two processes, as under `deno serve --parallel` or on Deploy. The
  // admin's `setRoles` commits after the sign-in read the user and before it stored the session
  // (it lists the user's sessions then, after the password's hash): the session used to keep the
  // roles read before the hash, `admin` taken away, until its absolute end - 7 days.
  await using kvFile = await tempStore();
  using store = await Deno.openKv(kvFile.path);
  using other = await Deno.openKv(kvFile.path);
  let revoked: Promise<unknown> | undefined;
  const kv = new Proxy(store, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name !== "list") return typeof value === "function" ? value.bind(target) : value;
      return (selector: { prefix: Deno.KvKey }, options?: Deno.KvListOptions) => {
        if (selector.prefix[1] === "user_sessions" && !revoked) {
          revoked = setRoles(other, "demoted@example.com", []);
          return (async function* () {
            await revoked;
            yield* target.list(selector, options);
          })();
        }
        return target.list(selector, options);
      };
    },
  });
  const app = memoryApp(authFiles(), { kv, auth: ROOMY });
  const demoted = await storedUser(store, "demoted@example.com", { roles: ["admin"] });
  const client = new TestClient(app);
  const call = await callAction(client, actionIds.logIn, [
    credentials("demoted@example.com", PASSWORD),
  ]);
  assert.equal(call.status, 200, call.text);
  assert.ok(revoked, "the sign-in listed the user's sessions");
  assert.deepEqual((await getUser(store, demoted.id))?.roles, []);
  assert.equal(
    (await client.request("/admin")).status,
    403,
    "the session kept the role taken away",
  );
});

Deno.test("roles for an email no user has: an expected 404 naming it, not a failure", async () => {
  // An admin page that grants roles (a product's) passes on what was typed: a typo is the
  // admin's to fix, so it must reach them as the product's refusal, never a 500 with a digest.
  const kv = await Deno.openKv(":memory:");
  try {
    await assert.rejects(setRoles(kv, "nobody@example.com", ["admin"]), (error) => {
      assert.ok(error instanceof UnknownUserError, String(error));
      assert.ok(isHttpError(error));
      assert.equal(error.status, 404);
      assert.equal(error.message, "No user has the email nobody@example.com");
      return true;
    });
    const app = memoryApp({
      routes: {
        "grant.ts": {
          handler: { POST: async () => Response.json(await setRoles(kv, "typo@example", ["x"])) },
        },
      },
    }, { kv });
    const res = await app.request("/grant", { method: "POST" });
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), {
      error: { status: 404, message: "No user has the email typo@example" },
    });
  } finally {
    kv.close();
  }
});

Deno.test("getUser: a user by the id a product keys its data by, without the hash; null for any other", async () => {
  // A product stores `user.id` on its items (a booking's patient) and must show whose they are
  // to someone else (the receptionist): the id is all it has, and may come from a form or a URL.
  const kv = await Deno.openKv(":memory:");
  try {
    const ada = await createUser(kv, {
      email: "ada@example.com",
      password: PASSWORD,
      roles: ["patient"],
    });
    assert.deepEqual(await getUser(kv, ada.id), ada);
    assert.ok(!("passwordHash" in (await getUser(kv, ada.id))!), "no hash");
    await setRoles(kv, "ada@example.com", ["patient", "admin"]);
    assert.deepEqual((await getUser(kv, ada.id))?.roles, ["patient", "admin"], "as stored now");
    for (const id of ["", "ada@example.com", crypto.randomUUID(), "x".repeat(3000), `${ada.id} `]) {
      assert.equal(await getUser(kv, id), null, JSON.stringify(id.slice(0, 40)));
    }
    assert.equal(await getUser(kv, 42 as unknown as string), null);
  } finally {
    kv.close();
  }
});

Deno.test("reading the session: no KV read without the cookie or where nothing asks, one at most", async () => {
  using t = await setup();
  const client = t.browser();
  await client.signInAs(await storedUser(t.kv, "reads@example.com"));
  const reads = async (client: TestClient, path: string, headers: HeadersInit = {}) => {
    const before = t.counted.reads;
    const res = await client.request(path, { headers });
    await res.body?.cancel();
    return { status: res.status, reads: t.counted.reads - before };
  };
  assert.deepEqual(await reads(t.browser(), "/account"), { status: 303, reads: 0 });
  assert.deepEqual(await reads(client, "/open"), { status: 200, reads: 0 });
  // The guard, the middleware after it and the handler all ask: one read.
  const page = await client.request("/account");
  assert.equal(page.headers.get("x-again"), "reads@example.com");
  await page.body?.cancel();
  assert.deepEqual(await reads(client, "/account"), { status: 200, reads: 1 });
  const bogus = { Cookie: "session=not-a-token" };
  assert.deepEqual(await reads(t.browser(), "/account", bogus), { status: 303, reads: 0 });
});

Deno.test("idle and absolute expiry, and the idle timer written back at most every few minutes", async () => {
  let now = Date.now();
  const minute = 60_000;
  using t = await setup({
    now: () => now,
    idleTimeoutMs: 30 * minute,
    absoluteTimeoutMs: 120 * minute,
    refreshAfterMs: 5 * minute,
  });
  const client = t.browser();
  await client.signInAs(await storedUser(t.kv, "clock@example.com"));
  const view = async () => {
    const writes = t.counted.writes;
    const res = await client.request("/account");
    await res.body?.cancel();
    return { status: res.status, writes: t.counted.writes - writes };
  };
  assert.deepEqual(await view(), { status: 200, writes: 0 });
  now += 4 * minute;
  assert.deepEqual(await view(), { status: 200, writes: 0 }, "within refreshAfterMs: no write");
  now += 2 * minute;
  assert.deepEqual(await view(), { status: 200, writes: 1 }, "past it: the timer moves on");
  assert.deepEqual(await view(), { status: 200, writes: 0 });
  // Used every 25 minutes, it stays on until its absolute end.
  for (let i = 0; i < 4; i++) {
    now += 25 * minute;
    assert.equal((await view()).status, 200, `after ${31 + 25 * (i + 1)} minutes`);
  }
  now += 25 * minute; // 131 minutes after sign-in
  assert.equal((await view()).status, 303, "past the absolute end");

  const idle = t.browser();
  await idle.signInAs(await storedUser(t.kv, "idle@example.com"));
  now += 31 * minute;
  assert.equal((await idle.request("/account")).status, 303, "unused past the idle timeout");
});

Deno.test("a browser's prefetch (Sec-Purpose) reads the session but never moves its idle timer", async () => {
  let now = Date.now();
  const minute = 60_000;
  using t = await setup({
    now: () => now,
    idleTimeoutMs: 30 * minute,
    refreshAfterMs: 5 * minute,
  });
  const client = t.browser();
  await client.signInAs(await storedUser(t.kv, "hover@example.com"));
  const view = async (headers: HeadersInit = {}) => {
    const writes = t.counted.writes;
    const res = await client.request("/account", { headers });
    await res.body?.cancel();
    return { status: res.status, writes: t.counted.writes - writes };
  };
  for (const purpose of ["prefetch", "prefetch;prerender"]) {
    now += 6 * minute;
    assert.deepEqual(await view({ "Sec-Purpose": purpose }), { status: 200, writes: 0 }, purpose);
  }
  // Prefetched for 24 minutes but not visited: the idle timer runs from the last visit.
  now += 6 * minute;
  assert.deepEqual(await view(), { status: 200, writes: 1 }, "a visit moves it on");
  for (let i = 0; i < 5; i++) {
    now += 6 * minute;
    await view({ "Sec-Purpose": "prefetch" });
  }
  assert.equal((await view()).status, 303, "30 minutes of prefetches alone: signed out as idle");
});

Deno.test("sign-in is limited per account and per client: 429 with Retry-After, no hash", async () => {
  using t = await setup({
    signInPerAccount: { limit: 2, windowMs: 60_000 },
    signInPerClient: { limit: 5, windowMs: 60_000 },
  });
  await storedUser(t.kv, "target@example.com");
  const browser = t.browser();
  const attempt = (email: string) => t.signIn(browser, email, "guess guess");
  for (let i = 0; i < 2; i++) assert.equal((await attempt("target@example.com")).status, 200);
  const refusedMs: number[] = [];
  const timed = async <T,>(times: number[], work: () => Promise<T>): Promise<T> => {
    const began = performance.now();
    const result = await work();
    times.push(performance.now() - began);
    return result;
  };
  const refused = await timed(refusedMs, () => attempt("TARGET@example.com"));
  assert.equal(refused.status, 429);
  assert.ok(Number(refused.res.headers.get("retry-after")) > 0);
  assert.match(JSON.parse(refused.text).error.message, /^Too many attempts/);
  // Unknown accounts are counted alike: the limit tells nothing about who has an account.
  for (let i = 0; i < 2; i++) assert.equal((await attempt(`nobody${i}@example.com`)).status, 200);
  const client = await timed(refusedMs, () => attempt("someone.else@example.com"));
  assert.equal(client.status, 429, "the client's 6th attempt in the window");
  // A refused attempt hashes nothing: it answers far sooner than one that hashes. Side by side,
  // the quickest of each: a pause of the shared machine's weighs on one sample, not on all.
  const hashedMs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const again = await timed(refusedMs, () => attempt(`again${i}@example.com`));
    assert.equal(again.status, 429);
    const joined = await timed(
      hashedMs,
      () =>
        callAction(t.browser(), actionIds.join, [credentials(`fresh${i}@example.com`, PASSWORD)]),
    );
    assert.equal(joined.status, 200);
  }
  const [refusedMin, hashedMin] = [Math.min(...refusedMs), Math.min(...hashedMs)];
  assert.ok(
    refusedMin * 3 < hashedMin,
    `refused in ${refusedMs.map(Math.round)} ms, a hash took ${hashedMs.map(Math.round)} ms`,
  );
});

Deno.test("a sign-in refused over a limit carries Retry-After and one warn line, called or posted", async () => {
  using t = await setup({ signInPerAccount: { limit: 1, windowMs: 60_000 } });
  await storedUser(t.kv, "locked@example.com");
  assert.equal((await t.signIn(t.browser(), "locked@example.com", "guess guess")).status, 200);
  using logs = captureLogs();
  const called = (await t.signIn(t.browser(), "locked@example.com", "guess again")).res;
  // A form posted with JavaScript off: the page's `_error.tsx`, status 429.
  const posted = await t.browser().request(`/_action/${actionIds.logIn}`, {
    method: "POST",
    body: credentials("locked@example.com", "guess again"),
    headers: { Origin: "http://localhost", Referer: "http://localhost/open", Accept: "text/html" },
  });
  assert.match(await posted.text(), /<h1>429<!-- -->: <!-- -->Too many attempts/);
  for (const refused of [called, posted]) {
    assert.equal(refused.status, 429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After: ${retryAfter}`);
    const lines = logs.of(refused);
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0].level, "warn");
    assert.equal(lines[0].msg, `rate limited: POST /_action/${actionIds.logIn}`);
    assert.equal(lines[0].retry_after_s, retryAfter);
  }
});

Deno.test("wrong passwords for one account from anywhere lock out new browsers, never the user's own", async () => {
  // The per-account limit bounds guessing from every client together; whoever spends it used to
  // keep the real user out too, for as long as they kept at it (2 tries a window sufficed here).
  using t = await setup({ signInPerAccount: { limit: 2, windowMs: 60_000 } });
  const owner = await storedUser(t.kv, "owner@example.com");
  const laptop = t.browser();
  const first = await t.signIn(laptop, "owner@example.com");
  assert.deepEqual(first.answer, { email: "owner@example.com" });
  assert.match(
    first.res.headers.getSetCookie().join("\n"),
    /(^|\n)device=[\w-]{43}; Max-Age=2592000; Path=\/; HttpOnly; SameSite=Lax/,
  );
  assert.equal((await t.signIn(laptop, "owner@example.com", "typo typo")).status, 200);

  // Someone else spends the account's tries (the laptop's first sign-in took one), each from a
  // browser of their own.
  const guess = await t.signIn(t.browser(), "owner@example.com", "guess guess");
  assert.deepEqual(guess.answer?.errors, { form: "Wrong email or password." });
  const refused = await t.signIn(t.browser(), "owner@example.com", "guess again");
  assert.equal(refused.status, 429, "the account's limit holds for every unknown browser");
  const elsewhere = await t.signIn(t.browser(), "owner@example.com");
  assert.equal(elsewhere.status, 429, "for the owner too, on a browser never signed in with");

  // The owner's laptop, which signed in before: its own limit, which the guesses did not touch.
  const back = await t.signIn(laptop, "owner@example.com");
  assert.equal(back.status, 200, back.text);
  assert.deepEqual(back.answer, { email: "owner@example.com" });
  assert.equal((await laptop.request("/account")).status, 200);
  // And that limit is one: a stolen cookie does not lift the bound on guessing. (Each sign-in
  // gives the browser a new token, with a window of its own: only the password gets one.)
  for (const status of [200, 200, 429]) {
    assert.equal((await t.signIn(laptop, "owner@example.com", "wrong wrong")).status, status);
  }
  // "Log out everywhere" (a lost laptop): no browser of the user's is known any more.
  const devices = () => entries(t.kv, ["auth", "devices", owner.id]).then((all) => all.length);
  assert.equal(await devices(), 1, "the laptop's latest token only");
  const everywhere = t.browser();
  await everywhere.signInAs(owner);
  assert.equal((await callAction(everywhere, actionIds.logOutEverywhere, [])).status, 200);
  assert.equal(await devices(), 0);
  // A device cookie is known for its own account only.
  await storedUser(t.kv, "other@example.com");
  for (let i = 0; i < 2; i++) await t.signIn(t.browser(), "other@example.com", `guess ${i}`);
  assert.equal((await t.signIn(laptop, "other@example.com")).status, 429);
});

Deno.test("a browser two accounts sign in with stays known for both: the other's sign-in never makes it unknown", async () => {
  // One device cookie a browser, replaced at every sign-in: a sibling's sign-in on the family
  // computer (or one's own second account) made it unknown for the first account, whose owner was
  // then refused there with everyone else's browsers while someone spent the account's tries.
  using t = await setup({ signInPerAccount: { limit: 2, windowMs: 60_000 } });
  await storedUser(t.kv, "owner@example.com");
  await storedUser(t.kv, "sibling@example.com");
  const family = t.browser();
  assert.equal((await t.signIn(family, "owner@example.com")).status, 200);
  assert.equal((await t.signIn(family, "sibling@example.com")).status, 200);
  for (let i = 0; i < 2; i++) await t.signIn(t.browser(), "owner@example.com", `guess ${i}`);
  assert.equal((await t.signIn(t.browser(), "owner@example.com")).status, 429);
  const back = await t.signIn(family, "owner@example.com");
  assert.equal(back.status, 200, back.text);
  assert.deepEqual(back.answer, { email: "owner@example.com" });
  // And for the sibling still, after the owner's sign-in; a cookie holds a few accounts' tokens.
  for (let i = 0; i < 2; i++) await t.signIn(t.browser(), "sibling@example.com", `guess ${i}`);
  assert.equal((await t.signIn(family, "sibling@example.com")).status, 200);
  assert.ok((await family.cookie("device"))!.length < 5 * 44);
});

Deno.test("a browser's token for an account the store no longer knows is replaced at its sign-in, never pushing out a sibling's", async () => {
  // The cookie holds the latest five accounts' tokens. A token whose record was pruned (the owner
  // signed in from more browsers than sessionsPerUser since) was not told from a sibling's: it
  // stayed in the cookie behind the new one and pushed the last sibling account out.
  // Four tries a window: the owner's four sign-ins below, or s4's first and three guesses.
  using t = await setup({ sessionsPerUser: 2, signInPerAccount: { limit: 4, windowMs: 60_000 } });
  const siblings = ["s4", "s3", "s2"].map((name) => `${name}@example.com`);
  for (const email of [...siblings, "owner@example.com", "s1@example.com"]) {
    await storedUser(t.kv, email);
  }
  const family = t.browser();
  for (const email of [...siblings, "owner@example.com", "s1@example.com"]) {
    assert.equal((await t.signIn(family, email)).status, 200, email);
  }
  const before = deviceTokens(await family.cookie("device"));
  assert.equal(before.length, 5, "five accounts' tokens, s1's first, s4's last");
  // The owner signs in on two other browsers: the family computer's record of theirs is pruned.
  for (let i = 0; i < 2; i++) {
    assert.equal((await t.signIn(t.browser(), "owner@example.com")).status, 200);
  }
  assert.equal((await t.signIn(family, "owner@example.com")).status, 200);
  const after = deviceTokens(await family.cookie("device"));
  assert.equal(after.length, 5);
  assert.equal(after.includes(before[1]), false, "the owner's old token is gone");
  assert.deepEqual(after.slice(1), [before[0], ...before.slice(2)], "every sibling's kept");
  // So s4, the oldest sibling, is still known there while someone spends its account's tries.
  for (let i = 0; i < 3; i++) await t.signIn(t.browser(), "s4@example.com", `guess ${i}`);
  assert.equal((await t.signIn(t.browser(), "s4@example.com")).status, 429);
  assert.equal((await t.signIn(family, "s4@example.com")).status, 200);
});

Deno.test("every entry of the device cookie is a token to a version from before account tags: a rollback knows the browser for each account", async () => {
  // Tags were first written beside the token (`token~tag`): a version from before them (a rollback,
  // the old half of a rollout) reads `split(".", 5).filter(isToken)`, found no token, knew the
  // browser for none of its accounts and dropped them all from the cookie at its next sign-in.
  using t = await setup();
  const owner = await storedUser(t.kv, "owner@example.com");
  const sibling = await storedUser(t.kv, "sibling@example.com");
  const family = t.browser();
  for (const email of ["owner@example.com", "sibling@example.com"]) {
    assert.equal((await t.signIn(family, email)).status, 200, email);
  }
  const cookie = await family.cookie("device");
  const read = (cookie ?? "").split(".", 5).filter(isToken); // as a version before tags reads it
  assert.equal(read.length, 2, String(cookie));
  // Each is known under its account, where that version looks it up.
  for (const [user, token] of [[sibling, read[0]], [owner, read[1]]] as const) {
    const known = await t.kv.get(["auth", "devices", user.id, tokenHash(token)]);
    assert.notEqual(known.value, null, user.email);
  }
});

Deno.test("a device cookie's entries as tags were first written (token~tag) are read, and written back bare", async () => {
  using t = await setup({ signInPerAccount: { limit: 2, windowMs: 60_000 } });
  await storedUser(t.kv, "owner@example.com");
  await storedUser(t.kv, "sibling@example.com");
  const family = t.browser();
  assert.equal((await t.signIn(family, "owner@example.com")).status, 200);
  const [owners] = deviceTokens(await family.cookie("device"));
  /** A sign-in from the family computer whose cookie holds `device` (a tag beside a token). */
  const signIn = (email: string, device: string) =>
    callAction(family, actionIds.logIn, [credentials(email, PASSWORD)], {
      headers: { Cookie: `device=${device}` },
    });
  assert.equal((await signIn("sibling@example.com", `${owners}~AAAAAAAA`)).status, 200);
  const cookie = (await family.cookie("device"))!;
  const [siblings, kept] = deviceTokens(cookie);
  assert.equal(kept, owners, "the owner's token, kept behind the sibling's");
  assert.ok(!cookie.includes("~"), `written back bare: ${cookie}`);
  // Known for the owner by such an entry, while someone spends the account's tries.
  for (let i = 0; i < 2; i++) await t.signIn(t.browser(), "owner@example.com", `guess ${i}`);
  assert.equal((await t.signIn(t.browser(), "owner@example.com")).status, 429);
  assert.equal((await signIn("owner@example.com", `${siblings}.${owners}~AAAAAAAA`)).status, 200);
});

Deno.test("a user's known browsers are bounded as their sessions are: the latest sessionsPerUser", async () => {
  // Every sign-in from a browser without the device cookie (a script, a private window) used to
  // add a record under the user that nothing removed for 30 days, however many.
  using t = await setup({ sessionsPerUser: 2 });
  const owner = await storedUser(t.kv, "owner@example.com");
  const browsers = [t.browser(), t.browser(), t.browser()];
  for (const browser of browsers) {
    assert.equal((await t.signIn(browser, "owner@example.com")).status, 200);
  }
  const kept = await entries(t.kv, ["auth", "devices", owner.id]);
  const latest = await Promise.all(
    browsers.slice(1).map(async (browser) =>
      tokenHash(deviceTokens(await browser.cookie("device"))[0])
    ),
  );
  assert.deepEqual(kept.map((entry) => entry.key.at(-1)).sort(), latest.sort());
  // A known browser signing in again trades its token for a new one: still two.
  assert.equal((await t.signIn(browsers[2], "owner@example.com")).status, 200);
  assert.equal((await entries(t.kv, ["auth", "devices", owner.id])).length, 2);
});

/**
 * `store` whose commits that write a device record are refused with SQLite's "database is locked"
 * (another worker writing the file), `refusals` times; `refused()` says how many were.
 */
function lockingDevices(store: Deno.Kv, refusals: number) {
  let left = refusals;
  const kv = new Proxy(store, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name !== "atomic") return typeof value === "function" ? value.bind(target) : value;
      return () => {
        const op = target.atomic();
        const [set, commit] = [op.set.bind(op), op.commit.bind(op)];
        let device = false;
        op.set = (key, ...rest) => {
          device ||= key[1] === "devices";
          return set(key, ...rest);
        };
        op.commit = () => {
          if (!device || left === 0) return commit();
          left--;
          return Promise.reject(new TypeError("database is locked"));
        };
        return op;
      };
    },
  });
  return { kv, refused: () => refusals - left };
}

Deno.test("a sign-in whose device record meets another worker's lock still signs in: retried, never a 500", async () => {
  // Two handles on one file (`deno serve --parallel`): SQLite refuses a commit at once with
  // "database is locked" while the other writes. The device's record was committed bare, so the
  // sign-in failed with a digest after its session had begun.
  const store = await Deno.openKv(":memory:");
  using _ = { [Symbol.dispose]: () => store.close() };
  const { kv, refused } = lockingDevices(store, 1);
  const owner = await storedUser(store, "owner@example.com");
  const app = memoryApp(authFiles(), { kv, auth: ROOMY });
  const browser = new TestClient(app);
  const call = await callAction(browser, actionIds.logIn, [
    credentials("owner@example.com", PASSWORD),
  ]);
  assert.equal(call.status, 200, call.text);
  assert.deepEqual(call.answer, { email: "owner@example.com" });
  assert.equal(refused(), 1, "the device's first commit was refused");
  const device = tokenHash(deviceTokens(await browser.cookie("device"))[0]);
  assert.equal((await store.get(["auth", "devices", owner.id, device])).value !== null, true);
});

Deno.test("a sign-in whose device record can never be written still signs in: the session stands, a warn line says so", async () => {
  // The other worker holds the file past every retry: the session has begun, its cookie is set.
  const store = await Deno.openKv(":memory:");
  using _ = { [Symbol.dispose]: () => store.close() };
  using logs = captureLogs();
  const { kv } = lockingDevices(store, Infinity);
  await storedUser(store, "owner@example.com");
  const app = memoryApp(authFiles(), { kv, auth: ROOMY });
  const browser = new TestClient(app);
  const call = await callAction(browser, actionIds.logIn, [
    credentials("owner@example.com", PASSWORD),
  ]);
  assert.equal(call.status, 200, call.text);
  assert.deepEqual(call.answer, { email: "owner@example.com" });
  // Before: the device's KvBusyError answered the sign-in as a failure, its session left behind.
  assert.ok(await browser.cookie("session"), "the session's cookie is set");
  assert.equal(await browser.cookie("device"), undefined);
  assert.ok(logs.lines.some((line) => /could not be remembered/.test(String(line.msg))));
});

Deno.test("an unknown email and a wrong password: the same answer, after the same work", async () => {
  using t = await setup();
  await storedUser(t.kv, "known@example.com");
  const times = { known: [] as number[], unknown: [] as number[] };
  const answers = new Set<string>();
  // Side by side, alternating, so that the machine's load weighs on both alike.
  for (let i = 0; i < 5; i++) {
    for (const who of ["known", "unknown"] as const) {
      const began = performance.now();
      const call = await t.signIn(t.browser(), `${who}@example.com`, `wrong ${i}`);
      times[who].push(performance.now() - began);
      answers.add(`${call.status} ${call.text}`);
    }
  }
  assert.equal(answers.size, 1, [...answers].join("\n"));
  assert.match([...answers][0], /^200 .*Wrong email or password\./);
  const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[xs.length >> 1];
  const ratio = median(times.unknown) / median(times.known);
  // Loose: the machine is shared, and a pause of it can land on most samples of one kind. Without
  // the stand-in hash, an unknown email is ~100× faster: ten times past the bound.
  assert.ok(
    ratio > 1 / 10 && ratio < 10,
    `unknown/known = ${ratio.toFixed(2)} (${JSON.stringify(times)})`,
  );
});

Deno.test("field errors come back for the form, field by field; emails are normalised", async () => {
  using t = await setup();
  const check = async (email: string, password: string) =>
    (await callAction(t.browser(), actionIds.join, [credentials(email, password)])).answer;
  assert.deepEqual(await check("", ""), {
    errors: { email: "Enter your email address.", password: "Enter your password." },
  });
  assert.deepEqual(await check("no-at-sign", "short"), {
    errors: { email: "That is not an email address.", password: "8 characters at least." },
  });
  assert.deepEqual(await check(`${"a".repeat(250)}@example.com`, PASSWORD), {
    errors: { email: "That is not an email address." },
  });
  assert.deepEqual(await check("ok@example.com", "x".repeat(1001)), {
    errors: { password: "1000 characters at most." },
  });
  await t.signUp(t.browser(), "taken@example.com");
  assert.deepEqual(await check("Taken@Example.com", PASSWORD), {
    errors: { email: "An account with this email exists." },
  });
  // NFC: the same address typed decomposed is the same account.
  await t.signUp(t.browser(), "zo\u00eb@example.com");
  assert.equal(
    (await t.signIn(t.browser(), "zoe\u0308@example.com")).answer?.email,
    "zo\u00eb@example.com",
  );
});

Deno.test("the bound on hashes at once: past the queue, 503 with Retry-After", async () => {
  using t = await setup({ hashesAtOnce: 1, hashesWaiting: 1 });
  await storedUser(t.kv, "busy@example.com");
  const calls = await Promise.all(
    Array.from({ length: 6 }, () => t.signIn(t.browser(), "busy@example.com")),
  );
  const statuses = calls.map((call) => call.status).sort();
  assert.deepEqual(statuses, [200, 200, 503, 503, 503, 503]);
  for (const call of calls.filter((call) => call.status === 503)) {
    assertBusy(call.res, call.text);
    assert.match(call.text, /^Service Unavailable: too many sign-ins at once;/);
  }
});

Deno.test("a hash that would wait past the request's deadline: 503 with Retry-After, never a 500", async () => {
  // One hash at a time and room for all in the queue: 24 sign-ins at once wait about 24 hashes
  // (0.28 s each here), far past a 4 s deadline on any machine, so the last ones must give up.
  // (The deadline leaves room for what comes before the queue on a loaded machine.)
  const store = await Deno.openKv(":memory:");
  try {
    const app = memoryApp(authFiles(), {
      kv: store,
      requestTimeoutMs: 4_000,
      auth: { ...ROOMY, hashesAtOnce: 1, hashesWaiting: 32 },
    });
    await storedUser(store, "queued@example.com");
    const island = () =>
      callAction(new TestClient(app), actionIds.logIn, [
        credentials("queued@example.com", PASSWORD),
      ]).then(({ res, text }) => new Response(text, res)); // its body, read, as it came
    // A form posted with JavaScript off.
    const form = () =>
      new TestClient(app).request(`/_action/${actionIds.logIn}`, {
        method: "POST",
        body: credentials("queued@example.com", PASSWORD),
        headers: {
          Origin: "http://localhost",
          Referer: "http://localhost/open",
          Accept: "text/html",
        },
      });
    // Twenty at once, then, once the first hash has begun, two of each way at the queue's tail:
    // those wait longest, so both ways give up however a loaded machine orders the first twenty.
    const began = hashesBegun();
    const first = Array.from({ length: 20 }, (_, i) => (i % 2 ? form : island)());
    for (let waited = 0; hashesBegun() === began && waited < 10_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const tail = Array.from({ length: 4 }, (_, i) => (i % 2 ? form : island)());
    const answers = await Promise.all([...first, ...tail]);
    const statuses = answers.map((res) => res.status);
    assert.deepEqual(
      [...new Set(statuses)].sort(),
      [200, 303, 503].filter((status) => statuses.includes(status)),
      `only successes and 503s: ${statuses}`,
    );
    assert.ok(statuses.includes(503), `some gave up: ${statuses}`);
    assert.ok(statuses.some((status) => status !== 503), `some signed in: ${statuses}`);
    for (const res of answers) {
      if (res.status === 503) assertBusy(res, await res.text());
      else await res.body?.cancel();
    }
    // Both ways of calling gave up alike.
    assert.ok(answers.some((res, i) => i % 2 === 1 && res.status === 503), "a form got 503");
    assert.ok(answers.some((res, i) => i % 2 === 0 && res.status === 503), "an island got 503");
  } finally {
    store.close();
  }
});

/** A 503 of the hash limiter: `Retry-After` in whole seconds, and the same number in its text. */
function assertBusy(res: Response, text: string) {
  assert.equal(res.status, 503);
  const seconds = res.headers.get("retry-after");
  assert.match(seconds ?? "", /^[1-9]\d*$/);
  assert.match(text, new RegExp(`^Service Unavailable: .+; try again in ${seconds} s$`));
}

Deno.test("the limiter gives up on a call it could not finish by its `by`", async () => {
  const bound = limiter(1, 5);
  const work = () => new Promise<string>((resolve) => setTimeout(() => resolve("done"), 50));
  const now = performance.now();
  const results = await Promise.allSettled([
    bound.run(work),
    bound.run(work, { by: now + 60 }), // it would start ~50 ms in: no time left for the work
    bound.run(work, { by: now + 60_000 }),
    bound.run(work, { by: now - 1 }), // already past: gives up at once
  ]);
  assert.deepEqual(results.map((r) => r.status), [
    "fulfilled",
    "rejected",
    "fulfilled",
    "rejected",
  ]);
  for (const result of results.filter((r) => r.status === "rejected")) {
    const res = (result as PromiseRejectedResult).reason.getResponse() as Response;
    assertBusy(res, await res.text());
  }
  assert.deepEqual(bound.load, { running: 0, waiting: 0 });
});

Deno.test("a lone call too slow for its `by` is told the server is busy, never that there are too many", async () => {
  const bound = limiter(2, 16);
  let finish!: (value: string) => void;
  // A fake hash that a starved machine runs for longer than the request may wait, and nobody else
  // asking: the place was free, so the only true thing to say is that the server is too slow now.
  const call = bound.run(() => new Promise<string>((resolve) => finish = resolve), {
    by: performance.now() + 200,
  });
  const res = (await call.then(() => assert.fail("answered"), (error) => error)).getResponse();
  const text = await res.text();
  assert.doesNotMatch(text, /too many/);
  assertBusy(res, text);
  assert.match(text, /^Service Unavailable: the server is too busy to check a password in time;/);
  assert.deepEqual(bound.load, { running: 1, waiting: 0 });
  finish("late");
});

Deno.test("a refusal's Retry-After is when the work ahead should be done, and its text says so", async () => {
  const bound = limiter(1, 2);
  const finishes: (() => void)[] = [];
  const work = () => new Promise<void>((resolve) => finishes.push(resolve));
  // One running and two waiting, none measured yet: three runs at the first estimate (0.5 s) each
  // are ahead of a new call, 1.5 s, so 2 s (it was always 1 s, however long the queue).
  const calls = [bound.run(work), bound.run(work), bound.run(work)];
  const refused = await bound.run(work).then(() => undefined, (error) => error);
  const res = refused.getResponse() as Response;
  assert.equal(res.headers.get("retry-after"), "2");
  assert.equal(
    await res.text(),
    "Service Unavailable: too many sign-ins at once; try again in 2 s",
  );
  for (const call of calls) {
    while (finishes.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    finishes.shift()!();
    await call;
  }
  assert.deepEqual(bound.load, { running: 0, waiting: 0 });
});

Deno.test("the limiter expects a run as slow as the slowest recent one, not their average", async () => {
  const bound = limiter(1, 5);
  const taking = (ms: number) => () =>
    new Promise<string>((resolve) => setTimeout(() => resolve("done"), ms));
  const now = performance.now();
  // Each run slower than the last, as under load. The second could start at ~700 ms and would end
  // at ~1700 ms, past its `by`: estimated from an average (~520 ms), it would start; from the
  // slowest run (700 ms) with the margin, it gives up in time.
  const results = await Promise.allSettled([
    bound.run(taking(700)),
    bound.run(taking(1_000), { by: now + 1_650 }),
  ]);
  assert.deepEqual(results.map((r) => r.status), ["fulfilled", "rejected"]);
  assert.deepEqual(bound.load, { running: 0, waiting: 0 });
});

Deno.test("a run still going just before its `by` is a 503 in time, and keeps its place until it ends", async () => {
  const bound = limiter(1, 5);
  let finish!: (value: string) => void;
  // When the 503 is due, read from the timer the limiter sets, not from the clock: on a loaded
  // machine a timer fires late, and a run that never ends must be answered all the same.
  const delays: number[] = [];
  const setTimer = globalThis.setTimeout;
  globalThis.setTimeout = ((fn: () => void, ms?: number) => {
    delays.push(ms ?? 0);
    return setTimer(fn, ms);
  }) as typeof setTimeout;
  let call: Promise<string>;
  try {
    // Started at once (a free place), then slower than any estimate: a CPU-starved hash.
    call = bound.run(() => new Promise<string>((resolve) => finish = resolve), {
      by: performance.now() + 300,
    });
  } finally {
    globalThis.setTimeout = setTimer;
  }
  assert.equal(delays.length, 1);
  // Due before `by`, with room left to send the answer.
  assert.ok(delays[0] < 290, `answered before its \`by\`: due in ${delays[0]} ms`);
  const refused = await call.then(() => undefined, (error) => error);
  assert.equal(refused?.getResponse().status, 503);
  assert.deepEqual(bound.load, { running: 1, waiting: 0 });
  finish("late");
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(bound.load, { running: 0, waiting: 0 });
  assert.equal(
    await bound.run(() => Promise.resolve("next"), { by: performance.now() + 300 }),
    "next",
  );
});

Deno.test("the limiter runs at most `concurrent` at once and queues at most `queued`", async () => {
  const bound = limiter(2, 3);
  let running = 0;
  let most = 0;
  const work = async () => {
    most = Math.max(most, ++running);
    await new Promise((resolve) => setTimeout(resolve, 10));
    running--;
    return "done";
  };
  const results = await Promise.allSettled(Array.from({ length: 8 }, () => bound.run(work)));
  assert.equal(most, 2);
  assert.equal(results.filter((r) => r.status === "fulfilled").length, 5);
  const refused = results.filter((r) => r.status === "rejected");
  assert.equal(refused.length, 3);
  const res = (refused[0] as PromiseRejectedResult).reason.getResponse() as Response;
  assert.equal(res.status, 503);
  // Two running and three waiting, two at a time: three runs at the first estimate (0.5 s).
  assert.equal(res.headers.get("retry-after"), "2");
  assert.deepEqual(bound.load, { running: 0, waiting: 0 });
  // A failing task hands its place on too.
  await assert.rejects(bound.run(() => Promise.reject(new Error("no"))));
  assert.equal(await bound.run(work), "done");
});

Deno.test("signUp with the product's roles: a patient who signs up reaches the patients' folder at once", async () => {
  using store = await Deno.openKv(":memory:");
  const join = async (form: FormData) => {
    const fields = { email: form.get("email"), password: form.get("password") };
    const result = await signUp(requestContext(), fields, { roles: ["patient"] });
    return result.ok ? result.user.roles : null;
  };
  const app = memoryApp({
    routes: {
      "book/_middleware.ts": { handler: requireRole("patient") },
      "book/index.tsx": { default: () => <h1>Book</h1> },
    },
    actions: { "routes/_join/actions.ts": { join } },
  }, { kv: store, auth: ROOMY });
  const client = new TestClient(app);
  assert.deepEqual(await client.call(join, credentials("pat@example.com", PASSWORD)), ["patient"]);
  // Before, the account had no role: 403 here, and setRoles would have ended the new session.
  const page = await client.get("/book");
  assert.equal(page.status, 200);
  await page.body?.cancel();
});

Deno.test("roles from a form or a JSON body are checked at run time: signUp, createUser and setRoles refuse what is no role's name", async () => {
  using store = await Deno.openKv(":memory:");
  const grace = await createUser(store, { email: "grace@example.com", password: PASSWORD });
  // Before, each was stored as given: a string as its letters, an object, a number.
  const refused: [unknown, RegExp][] = [
    ["admin", /setRoles: roles must be an array of role names, not "admin"/],
    [["editor", { $ne: null }], /setRoles: \{"\$ne":null\} is not a role's name/],
    [["editor", 7], /setRoles: 7 is not a role's name/],
    [["editor", undefined], /setRoles: undefined is not a role's name/],
    [
      ["super admin"],
      /setRoles: "super admin" is not a role's name \(letters, digits, _ - \. and :/,
    ],
  ];
  for (const [roles, message] of refused) {
    await assert.rejects(
      setRoles(store, grace.email, roles as string[]),
      (error: Error) => error instanceof TypeError && message.test(error.message),
    );
  }
  assert.deepEqual((await getUser(store, grace.id))?.roles, [], "nothing stored");
  await assert.rejects(
    createUser(store, { email: "x@example.com", password: PASSWORD, roles: [""] }),
    /createUser: "" is not a role's name/,
  );
  assert.deepEqual((await setRoles(store, grace.email, ["editor", "editor", "ops_2"])).roles, [
    "editor",
    "ops_2",
  ]);
  // Namespaced roles, as apps stored them before names were checked: taken, and kept by a
  // setRoles that adds one. Before, a TypeError: every change of such a user's roles threw.
  const namespaced = ["billing:read", "org.admin"];
  const ops = await createUser(store, {
    email: "o@example.com",
    password: PASSWORD,
    roles: namespaced,
  });
  assert.deepEqual(ops.roles, namespaced);
  assert.deepEqual((await setRoles(store, ops.email, [...ops.roles, "editor"])).roles, [
    ...namespaced,
    "editor",
  ]);

  // A product that passed the form's role to signUp: refused before any hash, no account made.
  const join = async (form: FormData) => {
    const fields = { email: form.get("email"), password: form.get("password") };
    const result = await signUp(requestContext(), fields, { roles: [form.get("role") as string] });
    return result.ok ? result.user.roles : null;
  };
  const app = memoryApp({ routes: {}, actions: { "routes/_join/actions.ts": { join } } }, {
    kv: store,
    auth: ROOMY,
  });
  const form = credentials("pat@example.com", PASSWORD);
  form.set("role", "admin<script>");
  using _logs = captureLogs();
  const failed = await new TestClient(app).call(join, form).catch((error) => error);
  assert.equal(failed.status, 500);
  assert.equal((await store.get(["auth", "emails", "pat@example.com"])).value, null);
});

Deno.test("an email's one spelling: two spellings of one address (cased, composed) are one account", async () => {
  // "Ά" and the iota below (U+0345), as typed, and the same address lowercased and composed ("ᾴ"):
  // canonically one address. Before: lowercased after composing, the first kept "ά\u0345", which
  // normalised again composes to "ᾴ" - the second got an account of its own, and the first's own
  // stored email, typed back, named no user.
  const kv = await Deno.openKv(":memory:");
  try {
    const typed = "\u0386\u0345@example.com";
    const ada = await createUser(kv, { email: typed, password: PASSWORD });
    assert.equal(normalizeEmail(ada.email), ada.email, "the stored spelling is its own normal");
    await assert.rejects(
      createUser(kv, { email: "\u1FB4@example.com", password: PASSWORD }),
      UserExistsError,
    );
    assert.deepEqual((await setRoles(kv, ada.email, ["admin"])).id, ada.id);
    // deleteUser reads the address as sign-up did: the other spelling names the same user.
    assert.equal((await deleteUser(kv, "\u1FB4@example.com")).id, ada.id);
    assert.equal(await getUser(kv, ada.id), null);
  } finally {
    kv.close();
  }
});

Deno.test("sign-ins at once keep the user's sessions within sessionsPerUser", async () => {
  using t = await setup({ sessionsPerUser: 3 });
  const many = await storedUser(t.kv, "crowd@example.com");
  // Before: each read the user's sessions before the others committed, and each kept them all -
  // ten at once left ten sessions (thirty: thirty-two) until the next sign-in trimmed them.
  await Promise.all(Array.from({ length: 10 }, () => t.browser().signInAs(many)));
  assert.equal((await sessionsOf(t.kv, many.id)).length, 3);
});
