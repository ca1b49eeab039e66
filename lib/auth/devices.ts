/**
 * @module
 * Known devices: the browsers a user signed in with lately, so that the per-account sign-in limit
 * cannot lock them out of their own account. A limit on an account's attempts from every client
 * together bounds guessing from many addresses, but whoever spends it - a few wrong passwords every
 * window, from anywhere - also keeps the real user out for as long as they keep at it. So a
 * successful sign-in leaves a second cookie (`device`; `__Host-device` over https), a random token
 * like the session's whose SHA-256 is stored under the user for `KNOWN_FOR_MS`, and a sign-in from
 * a browser known for that account is counted on a limit of its own (the same numbers) instead of
 * the account's (OWASP's "device cookies"). The attacker, without the cookie, is bounded as before;
 * the user, on a device they used in the last 30 days, is never refused for the attacker's tries.
 * Read only when someone signs in: a signed-in page costs nothing more. A user keeps at most
 * `sessionsPerUser` of them, the latest. A browser is known for a few accounts at once
 * (`ACCOUNTS`, each its own token in the one cookie): a sibling's sign-in on the family computer
 * no longer makes it unknown for the first account, whose owner was then refused with everyone.
 * Each token carries its account's tag (`accountTag`), so that a sign-in replaces the browser's
 * token for that account even when the store no longer knows it (pruned, expired): such a token
 * used to stay in the cookie and push out a sibling account's. The tag is the token's last
 * characters, not a suffix beside it: every entry keeps a token's shape, so that a version from
 * before tags (a rollback, the old half of a rollout) reads them all - a `token~tag` entry, as
 * tags were first written, was no token to it: it knew the browser for none of its accounts and
 * dropped them all from the cookie at its next sign-in. Such entries are still read, and written
 * back bare.
 */
import { createHash } from "node:crypto";
import type { Context } from "hono";
import { generateCookie, getCookie } from "hono/cookie";
import { kvOf } from "../kv/access.ts";
import { retrying } from "../kv/commit.ts";
import type { AuthSettings } from "./settings.ts";
import { isToken, newToken, tokenHash } from "./token.ts";

/** How long a browser stays known after its last successful sign-in: 30 days. */
const KNOWN_FOR_MS = 30 * 24 * 3_600_000;

const DEVICES = ["auth", "devices"] as const;
/** Keys one commit deletes at most (KV takes 1,000 mutations). */
const BATCH = 500;
/** Accounts a browser is known for at once: the latest to sign in, each by a token of its own. */
const ACCOUNTS = 5;

/** The device cookie's name: `__Host-device` over https, `device` otherwise. */
function deviceCookie(settings: AuthSettings): string {
  return settings.secure ? "__Host-device" : "device";
}

/**
 * Characters of an account's tag: 48 bits, so that two accounts' tags of a token never meet (nor
 * does an untagged token's end meet an account's tag); the 35 before it are 210 random bits.
 */
const TAG_CHARS = 8;
const TAG = new RegExp(`^[A-Za-z0-9_-]{${TAG_CHARS}}$`);

/**
 * A token of the cookie, and the tag of the account it is for when the entry says it apart
 * (`token~tag`, as tags were first written); a token of today carries its tag in itself.
 */
interface DeviceToken {
  token: string;
  tag?: string;
}

/**
 * Which account `random` (a token's random part) is for: a hash of both, so that the tag tells
 * nothing to anyone without the token, and only that one token's account.
 */
function accountTag(random: string, userId: string): string {
  return createHash("sha256").update(`${userId}\n${random}`).digest("base64url").slice(
    0,
    TAG_CHARS,
  );
}

/** A new device token for `userId`: random characters, then their tag for the account. */
function taggedToken(userId: string): string {
  const random = newToken().slice(0, -TAG_CHARS);
  return random + accountTag(random, userId);
}

/** Whether `device` is tagged for `userId`: in itself, or beside it (`token~tag`). */
function isTaggedFor({ token, tag }: DeviceToken, userId: string): boolean {
  if (tag !== undefined) return tag === accountTag(token, userId);
  return token.slice(-TAG_CHARS) === accountTag(token.slice(0, -TAG_CHARS), userId);
}

/**
 * The device tokens in the request's cookie (`.`-separated, latest first): `ACCOUNTS` at most,
 * whatever a client sends, and only those of a token's shape.
 */
function tokensOf(c: Context, name: string): DeviceToken[] {
  if (!c.req.header("cookie")?.includes(name)) return [];
  return (getCookie(c, name) ?? "").split(".", ACCOUNTS).flatMap((entry) => {
    const [token, tag] = entry.split("~", 2);
    return isToken(token) && (tag === undefined || TAG.test(tag)) ? [{ token, tag }] : [];
  });
}

/**
 * What the request's browser is known by for `userId` (the hash of its device token), if it signed
 * in to that account within `KNOWN_FOR_MS`: one KV read, none without the cookie.
 */
export async function knownDevice(
  c: Context,
  settings: AuthSettings,
  userId: string,
): Promise<string | undefined> {
  // Every token (five at most): one of another account is not told from one set before tags.
  const hashes = tokensOf(c, deviceCookie(settings)).map(({ token }) => tokenHash(token));
  if (hashes.length === 0) return undefined;
  const found = await kvOf(c).getMany(hashes.map((hash) => [...DEVICES, userId, hash]));
  return hashes.find((_, i) => found[i].value !== null);
}

/**
 * After a successful sign-in: the browser is known for `userId` from now on, by a new token (as a
 * session's: one an attacker planted is never kept); the one it had for `userId` goes, and so do
 * the user's oldest beyond `sessionsPerUser`: every sign-in from a browser without the cookie (a
 * script, a private window) adds one, and a user keeps as many known browsers as sessions. The
 * cookie keeps the browser's tokens of other accounts after the new one. Retried as every write
 * is: another worker's commit holding the file is no reason to fail a sign-in.
 */
export async function rememberDevice(c: Context, settings: AuthSettings, userId: string) {
  const kv = kvOf(c);
  const name = deviceCookie(settings);
  const tokens = tokensOf(c, name);
  const hashes = tokens.map(({ token }) => tokenHash(token));
  const token = taggedToken(userId);
  const now = settings.now();
  let had = new Set<string>();
  await retrying("remember a device", async (commit) => {
    const known = await Array.fromAsync(
      kv.list({ prefix: [...DEVICES, userId] }, { limit: BATCH }),
    );
    had = new Set(hashes.filter((hash) => known.some(({ key }) => key.at(-1) === hash)));
    let op = kv.atomic();
    for (const hash of had) op = op.delete([...DEVICES, userId, hash]);
    const newest = known.filter(({ key }) => !had.has(String(key.at(-1))))
      .sort((x, y) => knownSince(y) - knownSince(x));
    for (const { key } of newest.slice(settings.sessionsPerUser - 1)) op = op.delete(key);
    op = op.set([...DEVICES, userId, tokenHash(token)], now, { expireIn: KNOWN_FOR_MS });
    return (await commit(op)).ok || undefined;
  });
  // Its tokens tagged for `userId` go too, known or not (one untagged is told by the store only).
  const others = tokens.filter((device, i) => !had.has(hashes[i]) && !isTaggedFor(device, userId))
    .map((device) => device.token);
  const value = [token, ...others].slice(0, ACCOUNTS).join(".");
  const maxAge = Math.floor(KNOWN_FOR_MS / 1000);
  const flags = { path: "/", sameSite: "Lax", secure: settings.secure, httpOnly: true } as const;
  c.header("Set-Cookie", generateCookie(name, value, { ...flags, maxAge }), { append: true });
}

/** When a device signed in; a record written before they said (`true`) counts as the oldest. */
function knownSince(entry: Deno.KvEntry<unknown>): number {
  return typeof entry.value === "number" ? entry.value : 0;
}

/** Forgets every device of `userId` (signed out everywhere, or deleted), a batch a commit. */
export async function forgetDevices(kv: Deno.Kv, userId: string): Promise<void> {
  for (let round = 0; round < 100; round++) {
    const keys = await Array.fromAsync(
      kv.list({ prefix: [...DEVICES, userId] }, { limit: BATCH }),
      (entry) => entry.key,
    );
    if (keys.length === 0) return;
    await retrying("forget devices", async (commit) => {
      let op = kv.atomic();
      for (const key of keys) op = op.delete(key);
      return (await commit(op)).ok || undefined;
    });
  }
}
