/**
 * @module
 * Who holds a role (`roleHolders`, the declaration's `holders`): every write of roles - createUser,
 * signUp, setRoles, deleteUser - keeps the index equal to the records in its own commit; pages
 * lose and repeat no one; a client's `limit` and `cursor` are bounded; a store written before the
 * index existed is indexed by its first listing, and `reindexRoles` mends one an older version
 * wrote to.
 */
import assert from "node:assert/strict";
import {
  createUser,
  defineRoles,
  deleteUser,
  reindexRoles,
  roleHolders,
  setRoles,
  signUp,
  UnknownUserError,
} from "../lib/auth.ts";
import { isHttpError, requestContext } from "../lib/mod.ts";
import { TestClient } from "../lib/testing.ts";
import { insertUser, type UserRecord } from "../lib/auth/users.ts";
import { memoryApp } from "./helpers/app.ts";
import { credentials, STORED_PASSWORD } from "./helpers/auth.tsx";
import { twoWorkers } from "./helpers/kv.ts";

const HASH = "$scrypt$ln=15,r=8,p=3$unused$unused";

/** The roles the index says `id` holds, from its raw entries. */
async function indexed(kv: Deno.Kv, id: string): Promise<string[]> {
  const roles: string[] = [];
  for await (const { key } of kv.list({ prefix: ["auth", "role_holders"] })) {
    if (key[4] === id) roles.push(String(key[2]));
  }
  return roles.sort();
}

/** Every holder of `role`, page after page of `limit`, with how many pages it took. */
async function everyHolder(kv: Deno.Kv, role: string, limit: number) {
  const emails: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await roleHolders(kv, role, { limit, cursor });
    emails.push(...page.users.map((user) => user.email));
    cursor = page.cursor;
    pages++;
  } while (cursor !== null && pages < 1_000);
  return { emails, pages };
}

/**
 * A store whose index is built (listed once, empty): what writes do to it is theirs alone, not the
 * first listing's build.
 */
async function indexedStore(path = ":memory:"): Promise<Deno.Kv> {
  const kv = await Deno.openKv(path);
  await roleHolders(kv, "any");
  return kv;
}

const emailsOf = async (kv: Deno.Kv, role: string) =>
  (await roleHolders(kv, role)).users.map((user) => user.email);

Deno.test("a user given, changed, removed from a role and deleted is listed exactly where they hold it", async () => {
  using kv = await indexedStore();
  const house = await createUser(kv, {
    email: "house@example.com",
    password: "a long passphrase",
    roles: ["doctor"],
  });
  await insertUser(kv, { email: "cuddy@example.com", passwordHash: HASH, roles: ["admin"] });
  assert.deepEqual(await emailsOf(kv, "doctor"), ["house@example.com"]);
  assert.deepEqual(await emailsOf(kv, "receptionist"), []);

  await setRoles(kv, "cuddy@example.com", ["doctor", "admin"]); // given
  assert.deepEqual(await emailsOf(kv, "doctor"), ["cuddy@example.com", "house@example.com"]);
  const page = await roleHolders(kv, "doctor");
  assert.deepEqual(Object.keys(page.users[0]).sort(), ["email", "id", "name", "roles"]);
  assert.deepEqual(page.users[0].roles, ["doctor", "admin"]);
  assert.equal(page.cursor, null);

  await setRoles(kv, "house@example.com", ["receptionist"]); // changed
  assert.deepEqual(await emailsOf(kv, "doctor"), ["cuddy@example.com"]);
  assert.deepEqual(await emailsOf(kv, "receptionist"), ["house@example.com"]);
  assert.deepEqual(await indexed(kv, house.id), ["receptionist"]);

  await setRoles(kv, "house@example.com", []); // removed
  assert.deepEqual(await emailsOf(kv, "receptionist"), []);
  assert.deepEqual(await indexed(kv, house.id), []);

  const cuddy = await deleteUser(kv, "cuddy@example.com"); // deleted
  assert.deepEqual(await emailsOf(kv, "doctor"), []);
  assert.deepEqual(await emailsOf(kv, "admin"), []);
  assert.deepEqual(await indexed(kv, cuddy.id), []);
});

Deno.test("a deletion cut short has taken the user off every role in its first commit", async () => {
  using kv = await indexedStore();
  const ada = await insertUser(kv, { email: "ada@example.com", passwordHash: HASH, roles: ["a"] });
  // The `also` throws: the record stays, marked, and the index holds nothing of it.
  await assert.rejects(deleteUser(kv, ada.email, {
    also: () => {
      throw new Error("cut short");
    },
  }));
  assert.notEqual((await kv.get(["auth", "users", ada.id])).value, null);
  assert.deepEqual(await indexed(kv, ada.id), []);
  assert.deepEqual(await emailsOf(kv, "a"), []);
});

Deno.test("a user whose record an older version wrote with 1,000 roles is deleted, off every role", async () => {
  using kv = await indexedStore();
  const user = await insertUser(kv, { email: "hoarder@example.com", passwordHash: HASH });
  const key = ["auth", "users", user.id];
  const stored = (await kv.get<UserRecord>(key)).value!;
  await kv.set(key, { ...stored, roles: Array.from({ length: 1_000 }, (_, i) => `old${i}`) });
  assert.deepEqual(await reindexRoles(kv), { users: 1, added: 1_000, removed: 0 });
  assert.equal((await deleteUser(kv, user.email)).id, user.id);
  assert.equal((await kv.get(key)).value, null);
  assert.deepEqual(await indexed(kv, user.id), []);
});

Deno.test("setRoles racing a deletion's first commit writes no entry for the user being deleted", async () => {
  using kv = await indexedStore();
  const ada = await insertUser(kv, { email: "ada@example.com", passwordHash: HASH, roles: ["a"] });
  // setRoles's own read of the record (after its look-up's) comes after the deletion's mark.
  const get = kv.get.bind(kv);
  let reads = 0;
  kv.get = (async (key: Deno.KvKey, options?: { consistency?: Deno.KvConsistencyLevel }) => {
    if (key[1] === "users" && key[2] === ada.id && ++reads === 2) {
      await assert.rejects(deleteUser(kv, ada.email, {
        also: () => {
          throw new Error("cut short");
        },
      }));
    }
    return await get(key, options);
  }) as typeof kv.get;
  await assert.rejects(setRoles(kv, ada.email, ["a", "b"]), UnknownUserError);
  kv.get = get;
  await deleteUser(kv, ada.email); // finishes it
  // Before: the entries setRoles wrote on the marked record outlived the user.
  assert.deepEqual(await indexed(kv, ada.id), []);
});

Deno.test("signUp with roles lists the new user under them from its commit", async () => {
  using kv = await indexedStore();
  const join = async (form: FormData) => {
    const given = { email: form.get("email"), password: form.get("password") };
    const result = await signUp(requestContext(), given, { roles: ["patient"] });
    return result.ok ? result.user.id : null;
  };
  const app = memoryApp({ routes: {}, actions: { "routes/_join/actions.ts": { join } } }, { kv });
  const id = await new TestClient(app).call(join, credentials("pat@example.com", STORED_PASSWORD));
  assert.equal(typeof id, "string");
  assert.deepEqual(await indexed(kv, id as string), ["patient"]);
  assert.deepEqual(await emailsOf(kv, "patient"), ["pat@example.com"]);
});

Deno.test("pages over 250 holders lose and repeat no one, in the order of their names", async () => {
  using kv = await indexedStore();
  const emails: string[] = [];
  for (let i = 0; i < 250; i++) {
    const email = `doctor${String(i).padStart(3, "0")}@example.com`;
    emails.push(email);
    await insertUser(kv, {
      email,
      passwordHash: HASH,
      roles: i % 2 ? ["doctor", "x"] : ["doctor"],
    });
    if (i % 10 === 0) await insertUser(kv, { email: `p${i}@example.com`, passwordHash: HASH });
  }
  for (const limit of [1, 7, 100]) {
    const { emails: listed, pages } = await everyHolder(kv, "doctor", limit);
    assert.deepEqual(listed, emails, `limit ${limit}`);
    assert.equal(pages, Math.ceil(250 / limit), `limit ${limit}`);
  }
  // The cursor tells what the page shows, the name and id, not the email.
  const { cursor } = await roleHolders(kv, "doctor", { limit: 3 });
  assert.deepEqual(JSON.parse(atob(cursor!.replaceAll("-", "+").replaceAll("_", "/"))).length, 2);
  assert.ok(!atob(cursor!.replaceAll("-", "+").replaceAll("_", "/")).includes("@"));
  // Removed meanwhile: the pages after it go on from where the last ended.
  const first = await roleHolders(kv, "doctor", { limit: 100 });
  await setRoles(kv, "doctor100@example.com", []);
  await setRoles(kv, first.users[99].email, []);
  const second = await roleHolders(kv, "doctor", { limit: 100, cursor: first.cursor });
  assert.equal(second.users[0].email, "doctor101@example.com");
});

Deno.test("a page reads 10 entries per user asked for at most: past users who lost the role, short, with the cursor reached", async () => {
  using kv = await indexedStore();
  for (let i = 0; i < 45; i++) {
    const email = `gone${String(i).padStart(2, "0")}@example.com`;
    const user = await insertUser(kv, { email, passwordHash: HASH, roles: ["doctor"] });
    const stored = (await kv.get<UserRecord>(["auth", "users", user.id])).value!;
    await kv.set(["auth", "users", user.id], { ...stored, roles: [] }); // an older version's write
  }
  const holders = ["zoe@example.com", "zack@example.com", "zed@example.com"];
  for (const email of holders) {
    await insertUser(kv, { email, passwordHash: HASH, roles: ["doctor"] });
  }
  const first = await roleHolders(kv, "doctor", { limit: 2 });
  assert.deepEqual(first.users, []);
  assert.notEqual(first.cursor, null);
  const every = await everyHolder(kv, "doctor", 2);
  assert.deepEqual(every.emails, ["zack@example.com", "zed@example.com", "zoe@example.com"]);
  assert.equal(every.pages, 4);
});

Deno.test("a client's limit is bounded, and a cursor no page gave is a 400", async () => {
  using kv = await indexedStore();
  for (let i = 0; i < 120; i++) {
    await insertUser(kv, { email: `d${i}@example.com`, passwordHash: HASH, roles: ["doctor"] });
  }
  const sizes = [2 ** 32, Infinity, 0, -5, NaN, 2.7, undefined, "9" as unknown as number];
  const got = await Promise.all(
    sizes.map(async (limit) => (await roleHolders(kv, "doctor", { limit })).users.length),
  );
  assert.deepEqual(got, [100, 100, 1, 1, 50, 2, 50, 50]);
  for (const cursor of ["nope", "W10", btoa('["a@b.c","not-an-id"]'), "x".repeat(10_000)]) {
    await assert.rejects(
      roleHolders(kv, "doctor", { cursor }),
      (error) => isHttpError(error) && error.status === 400,
      cursor,
    );
  }
  await assert.rejects(roleHolders(kv, "no such role" as string), TypeError);
});

Deno.test("by name, lower case, however long the name", async () => {
  using kv = await indexedStore();
  const long = "Z".repeat(5_000);
  for (const [email, name] of [["b@x.io", "bea"], ["a@x.io", "Cal"], ["z@x.io", long]]) {
    // Stored as a version before createUser's name check did (200 characters at most now).
    await insertUser(kv, { email, name, passwordHash: HASH, roles: ["doctor"] });
  }
  const names = async (limit: number) => (await everyHolder(kv, "doctor", limit)).emails;
  assert.deepEqual(await names(1), ["b@x.io", "a@x.io", "z@x.io"]);
  assert.deepEqual(await names(50), ["b@x.io", "a@x.io", "z@x.io"]);
});

Deno.test("a name KV cannot keep as it is in a key (an emoji cut at the 100th unit, a lone surrogate) is listed", async () => {
  using kv = await indexedStore();
  const names = { "cut@x.io": `${"a".repeat(99)}\u{1F600}`, "lone@x.io": "b\ud800" };
  for (const [email, name] of Object.entries(names)) {
    // As a version before createUser's name check stored them (it refuses a lone surrogate now).
    await insertUser(kv, { email, name, passwordHash: HASH, roles: ["doctor"] });
  }
  assert.deepEqual((await everyHolder(kv, "doctor", 1)).emails, ["cut@x.io", "lone@x.io"]);
  assert.deepEqual(await reindexRoles(kv), { users: 2, added: 0, removed: 0 });
});

Deno.test("the cursor after a name that JSON writes at length (100 control characters) is taken back", async () => {
  using kv = await indexedStore();
  const names = { "ctl@x.io": "\u0001".repeat(100), "zed@x.io": "zed" };
  for (const [email, name] of Object.entries(names)) {
    // As a version before createUser's name check stored them (it refuses control characters now).
    await insertUser(kv, { email, name, passwordHash: HASH, roles: ["doctor"] });
  }
  assert.deepEqual((await everyHolder(kv, "doctor", 1)).emails, ["ctl@x.io", "zed@x.io"]);
});

Deno.test("the declaration's holders takes its roles only", async () => {
  using kv = await indexedStore();
  const roles = defineRoles(["doctor", "patient"]);
  await insertUser(kv, { email: "a@example.com", passwordHash: HASH, roles: ["doctor"] });
  assert.deepEqual((await roles.holders(kv, "doctor", { limit: 5 })).users.length, 1);
  if (false as boolean) {
    // @ts-expect-error -- a typo of a declared role
    await roles.holders(kv, "doctr");
  }
  await assert.rejects(
    roles.holders(kv, "doctr" as "doctor"),
    /holders: "doctr" is not one of the app's roles/,
  );
});

Deno.test("a store written before the index is indexed by its first listing; reindexRoles mends one written without it", async () => {
  using kv = await Deno.openKv(":memory:");
  // As a version before the index wrote them: the records and emails, no entries.
  const legacy: UserRecord[] = [];
  for (let i = 0; i < 30; i++) {
    const record: UserRecord = {
      id: crypto.randomUUID(),
      email: `old${String(i).padStart(2, "0")}@example.com`,
      name: `Old ${String(i).padStart(2, "0")}`,
      roles: i % 3 ? ["doctor"] : [],
      passwordHash: HASH,
      createdAt: Date.now(),
    };
    legacy.push(record);
    await kv.set(["auth", "users", record.id], record);
    await kv.set(["auth", "emails", record.email], record.id);
  }
  const doctors = legacy.filter((user) => user.roles.length).map((user) => user.email);
  assert.deepEqual((await everyHolder(kv, "doctor", 7)).emails, doctors);
  assert.notEqual((await kv.get(["auth", "role_holders_built"])).value, null);

  // An older version again: a role taken away and one given, neither in the index.
  const [taken, given] = [legacy[1], legacy[0]];
  await kv.set(["auth", "users", taken.id], { ...taken, roles: [] });
  await kv.set(["auth", "users", given.id], { ...given, roles: ["doctor"] });
  assert.ok(!(await emailsOf(kv, "doctor")).includes(taken.email)); // read from the record
  assert.deepEqual(await reindexRoles(kv), { users: 30, added: 1, removed: 1 });
  assert.deepEqual(await indexed(kv, taken.id), []);
  assert.deepEqual(await indexed(kv, given.id), ["doctor"]);
  assert.deepEqual(await reindexRoles(kv), { users: 30, added: 0, removed: 0 });
});

Deno.test("a store from before the index whose entries pass a commit's 80 KiB of keys is indexed", async () => {
  using kv = await Deno.openKv(":memory:");
  // As a version before the index wrote them: 60 users of 20 namespaced roles (a batch of 900
  // entries of ~100 bytes each passed KV's 81,920 bytes of keys set), and one of 1,000 roles.
  const legacy = async (i: number, roles: string[]) => {
    const record: UserRecord = {
      id: crypto.randomUUID(),
      email: `staff${String(i).padStart(2, "0")}@example.com`,
      name: `Firstname Lastname ${String(i).padStart(2, "0")}`,
      roles,
      passwordHash: HASH,
      createdAt: Date.now(),
    };
    await kv.set(["auth", "users", record.id], record);
    await kv.set(["auth", "emails", record.email], record.id);
    return record;
  };
  const granted = Array.from({ length: 20 }, (_, i) => `billing:read-${i}`);
  const staff = [];
  for (let i = 0; i < 60; i++) staff.push(await legacy(i, granted));
  const hoarder = await legacy(60, Array.from({ length: 1_000 }, (_, i) => `permission:${i}`));
  assert.deepEqual(await reindexRoles(kv), { users: 61, added: 2_200, removed: 0 });
  assert.equal((await indexed(kv, hoarder.id)).length, 1_000);
  assert.deepEqual(
    (await everyHolder(kv, "billing:read-7", 100)).emails,
    staff.map((u) => u.email),
  );
  assert.deepEqual(await reindexRoles(kv), { users: 61, added: 0, removed: 0 });
});

Deno.test("a first batch that lost its commit, gone through user by user, counts no entry twice", async () => {
  using kv = await Deno.openKv(":memory:");
  const legacy = async (id: string, roles: string[]) => {
    const record: UserRecord = {
      id,
      email: `${id.slice(0, 8)}@example.com`,
      name: id.slice(0, 8),
      roles,
      passwordHash: HASH,
      createdAt: Date.now(),
    };
    await kv.set(["auth", "users", id], record); // as a version before the index wrote it
    return record;
  };
  // Listed first: one role. Then 1,000, past one batch: its first 899 in the first batch.
  const nurse = await legacy("00000000-0000-4000-8000-000000000000", ["nurse"]);
  const hoarder = await legacy(
    "11111111-1111-4111-8111-111111111111",
    Array.from({ length: 1_000 }, (_, i) => `permission:${i}`),
  );
  // The first batch's commit loses: the nurse's record changes just before it.
  let raced = false;
  const racing = new Proxy(kv, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name !== "atomic") return typeof value === "function" ? value.bind(target) : value;
      return () => {
        const op = target.atomic();
        const commit = op.commit.bind(op);
        op.commit = async () => {
          if (!raced) {
            raced = true;
            await target.set(["auth", "users", nurse.id], { ...nurse, name: "nurse" });
          }
          return await commit();
        };
        return op;
      };
    },
  });
  // Before: 1,102 - the hoarder's last 101 entries, written user by user, counted again.
  assert.deepEqual(await reindexRoles(racing), { users: 2, added: 1_001, removed: 0 });
  assert.ok(raced);
  assert.equal((await indexed(kv, hoarder.id)).length, 1_000);
  assert.deepEqual(await indexed(kv, nurse.id), ["nurse"]);
});

Deno.test("a store reindexed by a script is not read whole again by its first listing", async () => {
  using kv = await Deno.openKv(":memory:");
  const record: UserRecord = {
    id: crypto.randomUUID(),
    email: "old@example.com",
    name: "Old",
    roles: ["doctor"],
    passwordHash: HASH,
    createdAt: Date.now(),
  };
  await kv.set(["auth", "users", record.id], record); // as a version before the index wrote it
  assert.deepEqual(await reindexRoles(kv), { users: 1, added: 1, removed: 0 });
  const counted = countingUserReads(kv);
  assert.deepEqual(await emailsOf(counted.kv, "doctor"), ["old@example.com"]);
  assert.equal(counted.reads(), 0);
});

/** `kv`, counting the listings of every user (a build of the index reads them all). */
function countingUserReads(kv: Deno.Kv): { kv: Deno.Kv; reads(): number } {
  let reads = 0;
  const counted = new Proxy(kv, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name !== "list") return typeof value === "function" ? value.bind(target) : value;
      return (selector: { prefix?: Deno.KvKey }, options?: Deno.KvListOptions) => {
        if (selector.prefix?.[1] === "users") reads++;
        return target.list(selector as Deno.KvListSelector, options);
      };
    },
  });
  return { kv: counted, reads: () => reads };
}

/** `kv`, counting its reads of the mark that says the role index is built. */
function countingLooks(kv: Deno.Kv): { kv: Deno.Kv; looks(): number } {
  let looks = 0;
  const counted = new Proxy(kv, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name !== "get") return typeof value === "function" ? value.bind(target) : value;
      return (key: Deno.KvKey, options?: { consistency?: Deno.KvConsistencyLevel }) => {
        if (key[1] === "role_holders_built") looks++;
        return target.get(key, options);
      };
    },
  });
  return { kv: counted, looks: () => looks };
}

/** Writes `count` users as a version before the index did (no entries); the doctors' emails. */
async function legacyUsers(kv: Deno.Kv, count: number): Promise<string[]> {
  const doctors: string[] = [];
  for (let i = 0; i < count; i++) {
    const email = `old${String(i).padStart(2, "0")}@example.com`;
    const record: UserRecord = {
      id: crypto.randomUUID(),
      email,
      name: `Old ${String(i).padStart(2, "0")}`,
      roles: i % 3 ? ["doctor"] : [],
      passwordHash: HASH,
      createdAt: Date.now(),
    };
    await kv.set(["auth", "users", record.id], record);
    if (i % 3) doctors.push(email);
  }
  return doctors;
}

Deno.test("two handles on one file list a store from before the index at once: one builds it, both list every holder", async () => {
  await twoWorkers(async (one, other) => {
    const doctors = await legacyUsers(one, 30);
    const [a, b] = [countingUserReads(one), countingUserReads(other)];
    const pages = await Promise.all([a.kv, b.kv].map((kv) => roleHolders(kv, "doctor")));
    assert.equal(a.reads() + b.reads(), 1, "one handle built the index");
    for (const page of pages) assert.deepEqual(page.users.map((user) => user.email), doctors);
    assert.equal((await one.get(["auth", "role_holders_building"])).value, null, "let go");
  });
});

Deno.test("while another process builds the index, a listing waits a second at most, then reads it as it stands", async () => {
  using kv = await Deno.openKv(":memory:");
  const doctors = await legacyUsers(kv, 6);
  const lease = ["auth", "role_holders_building"];
  await kv.set(lease, Date.now() + 60_000); // another process's, renewed
  const counted = countingUserReads(kv);
  const looks = countingLooks(counted.kv);
  const started = performance.now();
  assert.deepEqual((await roleHolders(looks.kv, "doctor")).users, []);
  // Counted, not timed: it looked for the build's mark again and again (every 50 ms), never more
  // often than a second holds, and only a slow machine makes the wait longer, never shorter.
  assert.ok(looks.looks() >= 2 && looks.looks() <= 21, `looked ${looks.looks()} times`);
  assert.ok(performance.now() - started >= 900);
  assert.equal(counted.reads(), 0);
  await kv.set(lease, Date.now() - 1); // its holder died: the lease lapsed
  assert.deepEqual(await emailsOf(counted.kv, "doctor"), doctors);
  assert.equal(counted.reads(), 1);
});

Deno.test("setRoles at once on one user from two handles leaves the index equal to the roles", async () => {
  await twoWorkers(async (one, other) => {
    await roleHolders(one, "any");
    const user = await insertUser(one, {
      email: "busy@example.com",
      passwordHash: HASH,
      roles: ["a"],
    });
    const sets = [["a"], ["b", "c"], [], ["a", "c"], ["d"], ["b"]];
    for (let round = 0; round < 10; round++) {
      await Promise.all([
        setRoles(one, user.email, sets[round % sets.length]),
        setRoles(other, user.email, sets[(round + 3) % sets.length]),
        setRoles(one, user.email, sets[(round + 1) % sets.length]),
      ]);
      const stored = (await other.get<UserRecord>(["auth", "users", user.id])).value!;
      assert.deepEqual(await indexed(one, user.id), [...stored.roles].sort(), `round ${round}`);
    }
  });
});

Deno.test("a change of 500 roles for 500 others, past one commit's mutations, ends equal too", async () => {
  using kv = await indexedStore();
  const old = Array.from({ length: 500 }, (_, i) => `old${i}`);
  const now = Array.from({ length: 500 }, (_, i) => `new${i}`);
  const user = await insertUser(kv, { email: "many@example.com", passwordHash: HASH, roles: old });
  assert.deepEqual((await setRoles(kv, user.email, now)).roles, now);
  assert.deepEqual(await indexed(kv, user.id), [...now].sort());
});

Deno.test("setRoles on a record an older version wrote with 1,000 roles drops them over several commits", async () => {
  using kv = await indexedStore();
  const user = await insertUser(kv, { email: "hoarder@example.com", passwordHash: HASH });
  const key = ["auth", "users", user.id];
  const stored = (await kv.get<UserRecord>(key)).value!;
  const old = Array.from({ length: 1_000 }, (_, i) => `old${i}`);
  await kv.set(key, { ...stored, roles: old }); // past today's 500, no entries
  assert.deepEqual((await setRoles(kv, user.email, ["a", "old7"])).roles, ["a", "old7"]);
  assert.deepEqual((await kv.get<UserRecord>(key)).value!.roles, ["a", "old7"]);
  assert.deepEqual(await indexed(kv, user.id), ["a", "old7"]);
});

Deno.test("500 roles of 64 characters for a name of 40, past a commit's 80 KiB of keys, are given whole", async () => {
  using kv = await indexedStore();
  const long = Array.from({ length: 500 }, (_, i) => `role-${i}:`.padEnd(64, "x"));
  const name = "Maximiliana Wilhelmina Bartholomew-Smith"; // 40: 500 entries of 166 bytes
  const created = await createUser(kv, {
    email: "max@example.com",
    password: STORED_PASSWORD,
    name,
    roles: long,
  });
  assert.deepEqual(created.roles, long);
  assert.deepEqual(await indexed(kv, created.id), [...long].sort());

  const other = await createUser(kv, {
    email: "wil@example.com",
    password: STORED_PASSWORD,
    name,
    roles: ["a", long[3]],
  });
  assert.deepEqual((await setRoles(kv, other.email, long)).roles, long);
  assert.deepEqual(await indexed(kv, other.id), [...long].sort());
  assert.deepEqual(
    (await roleHolders(kv, long[499])).users.map((user) => user.email).sort(),
    [created.email, other.email].sort(), // one name: in the order of their ids
  );
  assert.deepEqual((await setRoles(kv, other.email, ["a"])).roles, ["a"]);
  assert.deepEqual(await indexed(kv, other.id), ["a"]);
});

Deno.test("reindexRoles racing setRoles on another handle writes no entry for a role taken away meanwhile", async () => {
  await twoWorkers(async (one, other) => {
    const legacy: UserRecord[] = [];
    for (let i = 0; i < 300; i++) {
      const id = crypto.randomUUID();
      const record = {
        id,
        email: `u${i}@example.com`,
        name: `u${i}`,
        roles: ["doctor"],
        passwordHash: HASH,
        createdAt: 0,
      };
      legacy.push(record);
      await one.atomic().set(["auth", "users", id], record).set(
        ["auth", "emails", record.email],
        id,
      )
        .commit();
    }
    let reindexed = false;
    const changing = (async () => {
      for (let i = 0; !reindexed && i < 300; i++) await setRoles(other, legacy[i].email, ["x"]);
    })();
    await reindexRoles(one);
    reindexed = true;
    await changing;
    for (const user of legacy) {
      const stored = (await one.get<UserRecord>(["auth", "users", user.id])).value!;
      assert.deepEqual(await indexed(one, user.id), [...stored.roles].sort(), user.email);
    }
  });
});

Deno.test("reindexRoles racing setRoles that removes the entries it walks ends, the index equal to the roles", async () => {
  await twoWorkers(async (one, other) => {
    await roleHolders(one, "any");
    const users = [];
    for (let i = 0; i < 300; i++) {
      users.push(
        await insertUser(one, {
          email: `u${i}@example.com`,
          passwordHash: HASH,
          roles: ["doctor"],
        }),
      );
    }
    let reindexed = false;
    const changing = (async () => {
      for (let i = 299; !reindexed && i >= 0; i--) await setRoles(other, users[i].email, ["x"]);
    })();
    await reindexRoles(one);
    reindexed = true;
    await changing;
    for (const user of users) {
      const stored = (await one.get<UserRecord>(["auth", "users", user.id])).value!;
      assert.deepEqual(await indexed(one, user.id), [...stored.roles].sort(), user.email);
    }
  });
});
