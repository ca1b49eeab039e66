/**
 * @module
 * The role index made to agree with the users' records: `reindexRoles`, a script's call after an
 * older version wrote to the store, and the build a listing starts on a store written before the
 * index (`indexBuilt`): one process of all, under a lease in KV, in the background, while
 * listings wait for it boundedly.
 */
import { commit, retrying } from "../kv/commit.ts";
import { keySize, MAX_SET_KEYS_BYTES } from "../kv/limits.ts";
import { log } from "../server/log.ts";
import { byName, fitting, holderKey, HOLDERS, USERS, withHolders } from "./user_keys.ts";
import type { UserRecord } from "./users.ts";

/** Set once every user stored has their entries: the listing no longer builds them. */
const BUILT = ["auth", "role_holders_built"] as const;
/** Held by the process building the index; renewed while it does, so it lapses if that dies. */
const LEASE = ["auth", "role_holders_building"] as const;
const LEASE_MS = 30_000;
/** How long a listing waits for a build before it reads the index as it stands. */
const WAIT_MS = 1_000;
const POLL_MS = 50;
/** `kv.getMany` takes at most 10 keys. */
export const GET_MANY = 10;
/**
 * Users and entries one commit of `reindexRoles` writes: within KV's 100 checks, 1,000 mutations
 * and 80 KiB of keys set (`MAX_SET_KEYS_BYTES`) - 50 users of 20 roles such as `billing:read`
 * passed the last, and every build of the index failed.
 */
const BATCH_USERS = 50;
const BATCH_MUTATIONS = 900;
/**
 * Commits one user's entries take at most: a record (64 KiB at most) holds some 20,000 roles,
 * and a commit writes 200 entries at least (the longest keys).
 */
const MOST_COMMITS = 100;

/** Whether the record is of a live user holding `role`, under the entry's name. */
export function holds(
  record: UserRecord | null,
  role: string,
  entry: { name: string; id: string },
): boolean {
  return record !== null && record.deletingSince === undefined &&
    byName(record.name) === entry.name && record.roles.includes(role);
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
export async function indexBuilt(kv: Deno.Kv): Promise<void> {
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
  const op = kv.atomic().check(held).set(LEASE, Date.now() + LEASE_MS, { expireIn: LEASE_MS });
  if ((await commit(op)).ok) building.set(kv, buildLeased(kv));
}

/** Builds the index, renewing the lease meanwhile, and lets go of it; never rejects. */
async function buildLeased(kv: Deno.Kv): Promise<void> {
  const renew = setInterval(() => {
    // A closed store: the lease lapses by itself.
    kv.set(LEASE, Date.now() + LEASE_MS, { expireIn: LEASE_MS }).catch(() => {});
  }, LEASE_MS / 3);
  try {
    await reindexRoles(kv);
    await kv.delete(LEASE);
  } catch (error) {
    // The lease lapses, and a later listing, in this process or another, builds again.
    log("error", "role index: the build failed", { error: String(error) });
  } finally {
    clearInterval(renew);
    building.delete(kv);
  }
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
  let bytes = 0;
  // The last user of a batch that lost, which went user by user: all their entries were written.
  let alone: Deno.KvEntry<UserRecord> | undefined;
  const write = async () => {
    const op = kv.atomic();
    for (const { entry, missing } of batch) withHolders(op.check(entry), entry.value, missing);
    if (batch.length > 0 && (await commit(op)).ok) done.added += mutations;
    else {
      for (const { entry } of batch) done.added += await indexUser(kv, entry.key);
      alone = batch.at(-1)?.entry;
    }
    batch = [];
    mutations = bytes = 0;
  };
  for await (const entry of kv.list<UserRecord>({ prefix: USERS })) {
    done.users++;
    if (entry.value.deletingSince !== undefined) continue;
    // An entry at a time, so a user of many roles (an older version's 1,000) spans commits, each
    // checked against the record as read.
    for (const role of await missingRoles(kv, entry.value)) {
      const size = keySize(holderKey(role, entry.value));
      const another = batch.at(-1)?.entry !== entry;
      if (
        mutations === BATCH_MUTATIONS || bytes + size > MAX_SET_KEYS_BYTES ||
        (another && batch.length === BATCH_USERS)
      ) await write();
      // Its roles not yet batched are written already: in the next batch they were counted twice.
      if (alone === entry) break;
      if (batch.at(-1)?.entry !== entry) batch.push({ entry, missing: [] });
      batch.at(-1)!.missing.push(role);
      mutations++;
      bytes += size;
    }
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

/** Writes the entries the user's record lacks, as many a commit as fit, each checked; how many. */
async function indexUser(kv: Deno.Kv, key: Deno.KvKey): Promise<number> {
  let added = 0;
  for (let commits = 0; commits < MOST_COMMITS; commits++) {
    const written = await retrying("reindex roles", async (commit) => {
      const entry = await kv.get<UserRecord>(key);
      if (entry.value === null || entry.value.deletingSince !== undefined) return 0;
      const missing = fitting(entry.value, await missingRoles(kv, entry.value), BATCH_MUTATIONS);
      if (missing.length === 0) return 0;
      const op = withHolders(kv.atomic().check(entry), entry.value, missing);
      return (await commit(op)).ok ? missing.length : undefined;
    });
    if (written === 0) break;
    added += written;
  }
  return added;
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
