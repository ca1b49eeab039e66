/**
 * @module
 * Sessions in Deno KV, the same on every worker and instance. A session is stored at
 * `["auth", "sessions", hash]` - the SHA-256 of its token; the token itself is only ever in the
 * cookie - with who it is for (id, email, name, roles: so reading it is one KV read), when it
 * began, when it was last seen and when it ends whatever happens. Each user's sessions are indexed
 * at `["auth", "user_sessions", userId, hash]`, and every commit that adds or deletes a session
 * does the same to its index entry, so "sign out everywhere" and a change of roles find them all.
 *
 * Expiry is twofold: KV's `expireIn` drops what nobody ends (idle: the session; absolute: the index
 * entry), and every read checks both times itself, since KV may keep an expired key a while. The
 * idle timer is written back at most every `refreshAfterMs`, so a page view is not a KV write; that
 * write is checked against the version read, so it can never bring back a session ended meanwhile.
 */
import { commit, retrying } from "../kv/commit.ts";
import type { AuthSettings } from "./settings.ts";
import { newToken, tokenHash } from "./token.ts";
import { USERS } from "./user_keys.ts";
import type { User, UserRecord } from "./users.ts";

export interface SessionRecord {
  userId: string;
  email: string;
  name: string;
  roles: string[];
  /** Sign-in, ms since the epoch. */
  createdAt: number;
  /** The last time the idle timer was written back. */
  seenAt: number;
  /** The absolute end. */
  expiresAt: number;
}

/** A session as a request holds it. */
export interface Session {
  hash: string;
  record: SessionRecord;
}

const SESSIONS = ["auth", "sessions"] as const;
const BY_USER = ["auth", "user_sessions"] as const;
/** Keys one commit deletes at most when ending many sessions (KV takes 1,000 mutations). */
const BATCH = 400;

const sessionKey = (hash: string) => [...SESSIONS, hash];
/** When the user's latest session began: every sign-in's commit checks and moves it. */
export const beganKey = (userId: string) => ["auth", "user_began", userId];
const indexKey = (userId: string, hash: string) => [...BY_USER, userId, hash];

/**
 * A new session for `user`, ending `replacing` (the request's old one: a new token at every
 * sign-in) and the user's oldest beyond `sessionsPerUser`, in one commit. Who the session is for
 * (email, name, roles) is read from the user's record in the loop that commits, and the commit
 * checks that record: a sign-in read the user before its password's hash, and a change of roles
 * committed meanwhile (`setRoles`, on any worker or instance) would otherwise be undone for this
 * session until its absolute end; and a user deleted meanwhile (`deleteUser`: marked, then gone)
 * gets no session. The user's sessions are read in that loop too, and the commit checks and moves
 * when their latest began: sign-ins at once stay within `sessionsPerUser`. Returns the new token,
 * for the cookie, and the session; `undefined` when the user no longer exists.
 */
export async function startSession(
  kv: Deno.Kv,
  user: User,
  settings: AuthSettings,
  replacing?: Session,
): Promise<{ token: string; session: Session } | undefined> {
  const token = newToken();
  const hash = tokenHash(token);
  const now = settings.now();
  const record = await retrying("start a session", async (commit) => {
    const [stored, began] = await kv.getMany<[UserRecord, number]>([
      [...USERS, user.id],
      beganKey(user.id),
    ]);
    // Deleted, or being deleted: `null`, the attempt's answer that is not a retry.
    if (!stored.value || stored.value.deletingSince !== undefined) return null;
    // Read again at each try, and `began` checked and moved by the commit: sign-ins at once
    // each kept the sessions the others were adding (ten at once: ten, past a bound of three).
    const others = (await sessionsOf(kv, user.id))
      .filter((other) => other.hash !== replacing?.hash)
      // Newest first; two started in one millisecond by their commits' order (versionstamps grow).
      .sort((a, b) =>
        b.createdAt - a.createdAt ||
        (a.versionstamp < b.versionstamp ? 1 : a.versionstamp > b.versionstamp ? -1 : 0)
      )
      .slice(settings.sessionsPerUser - 1);
    const { email, name, roles } = stored.value;
    const record: SessionRecord = {
      userId: user.id,
      email,
      name,
      roles: [...roles],
      createdAt: now,
      seenAt: now,
      expiresAt: now + settings.absoluteTimeoutMs,
    };
    let op = kv.atomic()
      .check(stored, began)
      .set(beganKey(user.id), now, { expireIn: settings.absoluteTimeoutMs })
      .set(sessionKey(hash), record, { expireIn: idleFor(record, settings, now) })
      .set(indexKey(user.id, hash), { createdAt: now }, { expireIn: settings.absoluteTimeoutMs });
    if (replacing) op = withoutSessions(op, replacing.record.userId, [replacing]);
    op = withoutSessions(op, user.id, others);
    return (await commit(op)).ok ? record : undefined;
  });
  return record ? { token, session: { hash, record } } : undefined;
}

/**
 * The session whose token hashes to `hash`, if it is still on: one KV read, and at most every
 * `refreshAfterMs` a write that moves its idle timer on - unless `touch` is false (a browser's
 * prefetch: the user may never come).
 */
export async function readSession(
  kv: Deno.Kv,
  hash: string,
  settings: AuthSettings,
  touch = true,
): Promise<Session | undefined> {
  const entry = await kv.get<SessionRecord>(sessionKey(hash));
  const record = entry.value;
  const now = settings.now();
  if (!record || now >= record.expiresAt || now >= record.seenAt + settings.idleTimeoutMs) {
    return undefined;
  }
  if (touch && now - record.seenAt >= settings.refreshAfterMs) {
    const seen = { ...record, seenAt: now };
    // Checked: a session ended since the read stays ended. Losing the race costs nothing.
    await commit(
      kv.atomic().check(entry).set(sessionKey(hash), seen, {
        expireIn: idleFor(seen, settings, now),
      }),
    );
    return { hash, record: seen };
  }
  return { hash, record };
}

/** Ends one session, on every worker and instance at once. */
export async function endSession(kv: Deno.Kv, session: Session): Promise<void> {
  await retrying("end a session", async (commit) => {
    const op = withoutSessions(kv.atomic(), session.record.userId, [session]);
    return (await commit(op)).ok || undefined;
  });
}

/** Ends every session of `userId`; returns how many there were. */
export async function endAllSessions(kv: Deno.Kv, userId: string): Promise<number> {
  let ended = 0;
  for (let round = 0; round < 100; round++) {
    const sessions = await sessionsOf(kv, userId);
    if (sessions.length === 0) break;
    await retrying("end sessions", async (commit) => {
      return (await commit(withoutSessions(kv.atomic(), userId, sessions))).ok || undefined;
    });
    ended += sessions.length;
  }
  return ended;
}

/** An index entry of a user's session: its commit's versionstamp orders two of one millisecond. */
interface SessionEntry {
  hash: string;
  createdAt: number;
  versionstamp: string;
}

/** The index entries of a user's sessions (at most one batch: a user keeps few). */
export async function sessionsOf(kv: Deno.Kv, userId: string): Promise<SessionEntry[]> {
  const found: SessionEntry[] = [];
  const entries = kv.list<{ createdAt: number }>({ prefix: [...BY_USER, userId] }, {
    limit: BATCH / 2,
  });
  for await (const { key, value, versionstamp } of entries) {
    found.push({ hash: String(key.at(-1)), createdAt: value.createdAt, versionstamp });
  }
  return found;
}

/** `op`, deleting the sessions and their index entries too. */
export function withoutSessions(
  op: Deno.AtomicOperation,
  userId: string,
  sessions: { hash: string }[],
): Deno.AtomicOperation {
  for (const { hash } of sessions) op = op.delete(sessionKey(hash)).delete(indexKey(userId, hash));
  return op;
}

/** How long the session lives unused from `now`: never past its absolute end. */
function idleFor(record: SessionRecord, settings: AuthSettings, now: number): number {
  return Math.max(1, Math.min(settings.idleTimeoutMs, record.expiresAt - now));
}
