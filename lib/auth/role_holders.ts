/**
 * @module
 * Who holds a role: `roleHolders(kv, role, { limit, cursor })` lists them a page at a time, in the
 * order of their names, from the index every write of roles keeps in its own commit
 * (`user_keys.ts`). A store written before the index existed has users with no entries: the first
 * listing builds them (`reindexRoles`) in the background, one process of all under a lease, once
 * per store (a mark keeps it done); the same call mends a store an older version wrote to
 * meanwhile. Each page reads the users' records,
 * so it shows them as stored and never one that no longer holds the role.
 */
import { Buffer } from "node:buffer";
import { HttpError } from "../shared/http_error.ts";
import { log } from "../server/log.ts";
import { commit, retrying } from "../kv/commit.ts";
import { ROLE_NAME } from "./role_names.ts";
import { byName, holderKey, HOLDERS, USERS, withHolders } from "./user_keys.ts";
import { publicUser, type User, USER_ID, type UserRecord } from "./users.ts";

/** Set once every user stored has their entries: the listing no longer builds them. */
const BUILT = ["auth", "role_holders_built"] as const;
/** Held by the process building the index; renewed while it does, so it lapses if that dies. */
const LEASE = ["auth", "role_holders_building"] as const;
const LEASE_MS = 30_000;
/** How long a listing waits for a build before it reads the index as it stands. */
const WAIT_MS = 1_000;
const POLL_MS = 50;
/** A page's size when none is asked for, and the most one holds. */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 100;
/**
 * The longest cursor a page gives: base64url of `[name, id]` in JSON, where each of the name's 100
 * units may be written in 6 (`\u0001`, a control character), 858 characters in all.
 */
const MAX_CURSOR = 1_024;
/**
 * Entries a page reads at most, per user it lists: entries of users who no longer hold the role (an
 * older version's writes, until `reindexRoles`) are skipped, boundedly.
 */
const MAX_READ = 10;
/** `kv.getMany` takes at most 10 keys. */
const GET_MANY = 10;
/** Users and entries one commit of `reindexRoles` writes: within KV's 100 checks, 1,000 mutations. */
const BATCH_USERS = 50;
const BATCH_MUTATIONS = 900;

/**
 * What `roleHolders` takes: how many at most, and where the last page ended.
 *
 * @example
 * ```ts
 * import type { HoldersOptions } from "shell/auth";
 *
 * const firstPage: HoldersOptions = { limit: 20 };
 * ```
 * @see docs/users.md - Who holds a role
 */
export interface HoldersOptions {
  /**
   * At most this many users, 1 to 100 (50 when not given): any other number is brought within it
   * (a client's `2 ** 32` lists 100, `0` lists 1, `NaN` 50), so a number from a URL can be passed.
   */
  limit?: number;
  /** The `cursor` of the page before, to list what follows it; none for the first page. */
  cursor?: string | null;
}

/**
 * A page of the users holding a role.
 *
 * @example
 * ```ts
 * import type { HoldersPage } from "shell/auth";
 *
 * const emails = (page: HoldersPage) => page.users.map((user) => user.email);
 * ```
 * @see docs/users.md - Who holds a role
 */
export interface HoldersPage {
  /** The users, by name, as requests see them: no password hash. */
  users: User[];
  /**
   * Pass it back for the next page; `null` when this one is the last. A page may be short, even
   * empty, with a cursor: it read its most entries (10 per user asked for) of users who no longer
   * hold the role, and the next page goes on from there.
   */
  cursor: string | null;
}

/**
 * The users who hold `role`, a page at a time, in the order of their names (lower case): the doctors a patient
 * books with, the clerks on a rota. Each is read from their record as stored, so a page never
 * shows someone whose role was taken away or who is being deleted; a user given the role, or
 * signed up with it, is listed from the commit that gave it. On a store written before the index
 * existed, one process of all builds it (`reindexRoles`, in the background) and a listing waits
 * for it a second at most, then reads the index as it stands: it may miss users until the build
 * is done.
 *
 * @param kv The store (`kvOf(ctx)` in a request).
 * @param role A role's name, as `requireRole()` takes it.
 * @param options `limit` (1 to 100, 50 by default) and the `cursor` of the page before.
 * @returns The users and the cursor of the next page (`null` at the end).
 * @throws {TypeError} When `role` is not a role's name (letters, digits, `_ - . :`, 64 at most).
 * @throws {HttpError} 400 when `cursor` is not one a page gave: a client's, from a URL.
 *
 * @example
 * ```ts
 * import { createUser, roleHolders } from "shell/auth";
 *
 * const kv = await Deno.openKv(":memory:");
 * await createUser(kv, { email: "house@example.com", password: "a long passphrase", roles: ["doctor"] });
 * const page = await roleHolders(kv, "doctor", { limit: 20 });
 * console.log(page.users.map((user) => user.email), page.cursor); // ["house@example.com"] null
 * ```
 * @see docs/users.md - Who holds a role
 */
export async function roleHolders(
  kv: Deno.Kv,
  role: string,
  { limit, cursor }: HoldersOptions = {},
): Promise<HoldersPage> {
  if (typeof role !== "string" || !ROLE_NAME.test(role)) {
    throw new TypeError(`roleHolders: ${JSON.stringify(role)} is not a role's name`);
  }
  const size = pageSize(limit);
  const after = cursor === undefined || cursor === null ? undefined : fromCursor(cursor);
  await indexBuilt(kv);
  const prefix = [...HOLDERS, role];
  const entries = kv.list(after ? { prefix, start: [...prefix, ...after] } : { prefix }, {
    batchSize: MAX_LIMIT + 1,
  });
  const users: User[] = [];
  let pending: { name: string; id: string }[] = [];
  let reached: { name: string; id: string } | undefined;
  let read = 0;
  let more = false;
  // The records of a few entries at a time: as many as the page still lacks.
  const readRecords = async () => {
    const records = await kv.getMany<UserRecord[]>(pending.map(({ id }) => [...USERS, id]));
    records.forEach(({ value }, i) => {
      if (holds(value, role, pending[i])) users.push(publicUser(value!));
    });
    reached = pending.at(-1);
    pending = [];
  };
  for await (const { key } of entries) {
    const [name, id] = key.slice(-2) as [string, string];
    if (after && name === after[0] && id === after[1]) continue; // `start` is inclusive
    if (users.length === size || read === size * MAX_READ) {
      more = true;
      break;
    }
    pending.push({ name, id });
    read++;
    const full = pending.length === Math.min(GET_MANY, size - users.length);
    if (full || read === size * MAX_READ) await readRecords();
  }
  if (pending.length > 0) await readRecords();
  return { users, cursor: more && reached ? toCursor(reached) : null };
}

/** Whether the record is of a live user holding `role`, under the entry's name. */
function holds(
  record: UserRecord | null,
  role: string,
  entry: { name: string; id: string },
): boolean {
  return record !== null && record.deletingSince === undefined &&
    byName(record.name) === entry.name && record.roles.includes(role);
}

/** `limit` brought within 1 to 100. */
function pageSize(limit: unknown): number {
  if (typeof limit !== "number" || Number.isNaN(limit)) return DEFAULT_LIMIT;
  return Math.min(MAX_LIMIT, Math.max(1, Math.floor(limit)));
}

/** The cursor after `user`: opaque to the caller, their name as the index has it and their id. */
function toCursor({ name, id }: { name: string; id: string }): string {
  return Buffer.from(JSON.stringify([name, id])).toString("base64url");
}

/** The name and id a cursor holds; a 400 for anything a page did not give. */
function fromCursor(cursor: unknown): [string, string] {
  const refused = () =>
    new HttpError(400, "Not a cursor of this listing: start from its first page");
  if (typeof cursor !== "string" || cursor.length > MAX_CURSOR) throw refused();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString());
  } catch {
    throw refused();
  }
  if (
    !Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== "string" ||
    parsed[0].length > 100 || typeof parsed[1] !== "string" || !USER_ID.test(parsed[1])
  ) throw refused();
  return parsed as [string, string];
}

/** The stores this process saw marked built: their listings go straight to the index. */
const built = new WeakSet<Deno.Kv>();
/** The builds this process runs, by store: each settles when done, failed or not. */
const building = new WeakMap<Deno.Kv, Promise<void>>();

/**
 * Waits, boundedly, for the index of a store written before it: one process of all builds it (the
 * lease), in the background, and a listing waits for the mark at most `WAIT_MS`, then reads the
 * index as it stands - a page may then miss users not yet indexed, never one past its deadline.
 */
async function indexBuilt(kv: Deno.Kv): Promise<void> {
  const until = Date.now() + WAIT_MS;
  for (let look = 0; look <= WAIT_MS / POLL_MS && !built.has(kv); look++) {
    if ((await kv.get(BUILT)).value !== null) built.add(kv);
    else {
      const left = until - Date.now();
      if (left <= 0) return;
      if (!building.has(kv)) await lease(kv);
      await pause(Math.min(POLL_MS, left), building.get(kv));
    }
  }
}

/** Starts the build if no process holds the lease or it lapsed (its holder died). */
async function lease(kv: Deno.Kv): Promise<void> {
  const held = await kv.get<number>(LEASE);
  if (held.value !== null && held.value > Date.now()) return;
  const hold = () => Date.now() + LEASE_MS;
  const taken = await commit(kv.atomic().check(held).set(LEASE, hold(), { expireIn: LEASE_MS }));
  if (!taken.ok) return;
  building.set(
    kv,
    (async () => {
      const renew = setInterval(() => {
        kv.set(LEASE, hold(), { expireIn: LEASE_MS }).catch(() => {}); // a closed store: it lapses
      }, LEASE_MS / 3);
      try {
        await reindexRoles(kv);
        await kv.delete(LEASE);
      } catch (error) {
        // Its lease lapses and a later listing, here or elsewhere, builds again.
        log("error", "role index: the build failed", { error: String(error) });
      } finally {
        clearInterval(renew);
        building.delete(kv);
      }
    })(),
  );
}

/** `ms` or until `build` settles, whichever is first. */
async function pause(ms: number, build: Promise<void> | undefined): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => timer = setTimeout(resolve, ms));
  await Promise.race(build ? [timeout, build] : [timeout]).finally(() => clearTimeout(timer));
}

/**
 * What `reindexRoles` did: users read, entries written, stale entries removed.
 *
 * @example
 * ```ts
 * import type { RolesReindexed } from "shell/auth";
 *
 * const line = ({ users, added, removed }: RolesReindexed) => `${users} ${added} ${removed}`;
 * ```
 * @see docs/users.md - Who holds a role
 */
export interface RolesReindexed {
  /** Users read. */
  users: number;
  /** Entries written: roles whose holder was missing from the index. */
  added: number;
  /** Entries removed: a user who no longer holds the role, or is gone. */
  removed: number;
}

/**
 * Makes the role index agree with the users' records: an entry for every role a user holds, and
 * none else. `roleHolders` runs it by itself once per store (the first listing of a store written
 * before the index existed); run it from a script after a version older than the index wrote to
 * the store (a rollback, instances of two versions at once), which changed roles without it. Each
 * change is one user's commit, checked against the record it read: a write landing first wins and
 * the user is read again. It reads every user, so it is a script's call, not a request's; it marks
 * the store, so a large one indexed by a script at deploy is not read again by its first listing.
 *
 * @param kv The store (`Deno.openKv(KV_PATH)` in a script).
 * @returns How many users were read, entries written and entries removed.
 *
 * @example
 * ```ts
 * import { reindexRoles } from "shell/auth";
 *
 * const kv = await Deno.openKv(":memory:");
 * console.log(await reindexRoles(kv)); // { users: 0, added: 0, removed: 0 }
 * kv.close();
 * ```
 * @see docs/users.md - Who holds a role
 */
export async function reindexRoles(kv: Deno.Kv): Promise<RolesReindexed> {
  const done: RolesReindexed = { users: 0, added: 0, removed: 0 };
  // Many users a commit (one commit each took 3.4 ms a user on a SQLite file: 2,000 in 7 s), each
  // checked; a batch that lost a race is done again a user at a time.
  let batch: { entry: Deno.KvEntry<UserRecord>; missing: string[] }[] = [];
  let mutations = 0;
  const write = async () => {
    const op = kv.atomic();
    for (const { entry, missing } of batch) withHolders(op.check(entry), entry.value, missing);
    if (batch.length > 0 && (await commit(op)).ok) done.added += mutations;
    else for (const { entry } of batch) done.added += await indexUser(kv, entry.key);
    batch = [];
    mutations = 0;
  };
  for await (const entry of kv.list<UserRecord>({ prefix: USERS })) {
    done.users++;
    if (entry.value.deletingSince !== undefined) continue;
    const missing = await missingRoles(kv, entry.value);
    if (missing.length === 0) continue;
    if (batch.length === BATCH_USERS || mutations + missing.length > BATCH_MUTATIONS) await write();
    batch.push({ entry, missing });
    mutations += missing.length;
  }
  await write();
  for await (const { key } of kv.list({ prefix: HOLDERS })) {
    const [role, name, id] = key.slice(-3) as [string, string, string];
    const removed = await retrying("reindex roles", async (commit) => {
      // Read again at each try: a write meanwhile (a role taken away) may have removed it.
      const [entry, record] = await kv.getMany<[unknown, UserRecord]>([key, [...USERS, id]]);
      if (entry.versionstamp === null || holds(record.value, role, { name, id })) return false;
      return (await commit(kv.atomic().check(entry, record).delete(key))).ok || undefined;
    });
    if (removed) done.removed++;
  }
  // Every user has their entries: no listing builds them again (a script's run at deploy spares a
  // large store's first listing, within a request, from reading every user).
  await kv.set(BUILT, Date.now());
  return done;
}

/** Writes the entries the user's record lacks, checked against it; how many. */
async function indexUser(kv: Deno.Kv, key: Deno.KvKey): Promise<number> {
  return await retrying("reindex roles", async (commit) => {
    const entry = await kv.get<UserRecord>(key);
    if (entry.value === null || entry.value.deletingSince !== undefined) return 0;
    const missing = await missingRoles(kv, entry.value);
    if (missing.length === 0) return 0;
    const op = withHolders(kv.atomic().check(entry), entry.value, missing);
    return (await commit(op)).ok ? missing.length : undefined;
  });
}

/** The roles of `user` the index has no entry for. */
async function missingRoles(kv: Deno.Kv, user: UserRecord): Promise<string[]> {
  const missing: string[] = [];
  for (let i = 0; i < user.roles.length; i += GET_MANY) {
    const roles = user.roles.slice(i, i + GET_MANY);
    const found = await kv.getMany(roles.map((role) => holderKey(role, user)));
    missing.push(...roles.filter((_, j) => found[j].value === null));
  }
  return missing;
}
