/**
 * @module
 * Who holds a role: `roleHolders(kv, role, { limit, cursor })` lists them a page at a time, in the
 * order of their names, from the index every write of roles keeps in its own commit
 * (`user_keys.ts`), and the cursor that goes on from a page. A store written before the index
 * existed is built first (`role_reindex.ts`). Each page reads the users' records, so it shows them
 * as stored and never one that no longer holds the role.
 */
import { Buffer } from "node:buffer";
import { HttpError } from "../shared/http_error.ts";
import { ROLE_NAME } from "./role_names.ts";
import { GET_MANY, holds, indexBuilt } from "./role_reindex.ts";
import { HOLDERS, USERS } from "./user_keys.ts";
import { publicUser, type User, USER_ID, type UserRecord } from "./users.ts";

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
