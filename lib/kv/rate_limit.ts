/**
 * @module
 * Rate limits on Deno KV: at most `limit` calls per key in any `windowMs` - a sliding log, exact
 * across `deno serve --parallel` workers, processes on one file and Deno Deploy isolates. A limit
 * past 7,000 calls, more than one KV value of call times holds, is counted in buckets instead
 * (rate_limit_buckets.ts: exact at a sixtieth of the window).
 *
 * The key's value is the times of the calls still inside the window (at most `limit` numbers). A
 * call reads it, drops what has left the window, and if there is room appends now and writes it
 * back with a `check` on what it read: of two racing calls one commits and the other reads again
 * and decides again, so exactly `limit` get through. A refused call writes nothing (but times
 * ahead of the clock, below); `expireIn` lets KV drop the key once its newest call has left the
 * window. Times ahead of the clock (it
 * stepped back, or another instance's runs ahead) count as now: a call is never held against its
 * key for longer than the window, however the clock moves.
 *
 * Within an isolate, calls on a key go one at a time, and a call that finds `limit` of them in
 * line is refused at once, without KV (see `limitCalls`): a burst is answered 429 promptly, after
 * at most `limit` calls' round trips, never after the whole line's.
 *
 * `rateLimit(options)` is the same as Hono middleware, per client (`clientAddress`, an IPv6 one by
 * its /64): over the limit, the request gets 429 with `Retry-After` and goes no further. In a
 * `_middleware.ts`, it limits the folder's pages and server actions; only requests that reach it
 * pay for it.
 */
import { limitedClient } from "../server/client.ts";
import { tooManyRequests } from "../server/too_many_requests.ts";
import type { Middleware } from "../server/types.ts";
import { kvOf } from "./access.ts";
import { type Commit, inLine, inTurn, retrying } from "./commit.ts";
import { keyName } from "./key_name.ts";
import { checkKey, nameOf } from "./key_too_long.ts";
import { MAX_EXPIRE_MS } from "./limits.ts";
import { countInBuckets } from "./rate_limit_buckets.ts";

/**
 * A limit: at most `limit` calls in any `windowMs`.
 *
 * @example
 * ```ts
 * import type { CallLimit } from "shell/data";
 *
 * const fivePerMinute: CallLimit = { limit: 5, windowMs: 60_000 };
 * ```
 * @see docs/data.md - Rate limits
 */
export interface CallLimit {
  /** How many calls a key may make in any window. */
  limit: number;
  /** The sliding window, in milliseconds. */
  windowMs: number;
}

/**
 * The most calls a window logs: their times are one KV value, 64 KiB at most, and V8 writes a
 * time in 9 bytes (a limit of 10,000 an hour threw KV's "Value too large" at the 7,281st call).
 * A larger limit is counted in buckets (rate_limit_buckets.ts).
 */
const MAX_LOGGED = 7_000;
/** The longest window: the log expires with it. */
const MAX_WINDOW_MS = MAX_EXPIRE_MS;

/** Throws a `RangeError` naming `whose` limit, for one KV cannot count. */
export function checkLimit({ limit, windowMs }: CallLimit, whose = "limitCalls"): void {
  if (!(Number.isSafeInteger(limit) && limit >= 1)) {
    throw new RangeError(`${whose}: a limit of ${limit} calls (a whole number, 1 or more)`);
  }
  if (!(Number.isInteger(windowMs) && windowMs >= 1 && windowMs <= MAX_WINDOW_MS)) {
    throw new RangeError(
      `${whose}: a window of ${windowMs} ms (a whole number from 1 to a year's, ${MAX_WINDOW_MS})`,
    );
  }
}

/**
 * What `limitCalls` decided: counted, with how many calls are left, or refused, with how long to
 * wait.
 *
 * @example
 * ```ts
 * import type { LimitResult } from "shell/data";
 *
 * function retryAfter(result: LimitResult): string | undefined {
 *   return result.ok ? undefined : String(result.retryAfterSeconds);
 * }
 * ```
 * @see docs/data.md - Rate limits
 */
export type LimitResult =
  | { ok: true; remaining: number }
  | { ok: false; retryAfterSeconds: number };

/**
 * Counts a call for `key` if it is within the limit: a sliding log under `["rate_limit", ...key]`,
 * exact across workers, processes and Deploy isolates. A limit past 7,000 calls is counted in 60
 * buckets of the window under `["rate_limit", ...key, "buckets", n]`: exact at a bucket's width
 * (never more than `limit` in any `windowMs`; a call may be refused up to a sixtieth of the window
 * early). A refused call writes nothing.
 *
 * @param kv The store.
 * @param key What is limited, e.g. `["export", userId]`.
 * @param limit The limit.
 * @param now The clock, for tests.
 * @returns Counted (`ok: true`, calls left) or refused (`ok: false`, seconds to wait).
 * @throws {RangeError} When `limit` is not a whole number, 1 or more, or `windowMs` not one from 1
 * to a year's.
 * @throws {KeyTooLongError} When the parts of `key` after its first (whom it counts, often a
 * client's) make it too long for KV: a 400 (code `too_long`) in a request.
 * @throws {TypeError} When the key is too long for KV with only its first part.
 *
 * @example
 * ```ts
 * import { limitCalls } from "shell/data";
 *
 * const kv = await Deno.openKv(":memory:");
 * const result = await limitCalls(kv, ["export", "user-1"], { limit: 3, windowMs: 3_600_000 });
 * if (!result.ok) console.log(`try again in ${result.retryAfterSeconds} s`);
 * ```
 * @see docs/data.md - Rate limits
 */
export async function limitCalls(
  kv: Deno.Kv,
  key: Deno.KvKeyPart[],
  { limit, windowMs }: CallLimit,
  now: () => number = Date.now,
): Promise<LimitResult> {
  checkLimit({ limit, windowMs });
  checkLimitKey(() => `limitCalls(${nameOf(key[0])})`, key);
  const kvKey = ["rate_limit", ...key];
  // One at a time in this isolate: a burst of calls racing each other for the key's commit ran
  // out of attempts (a KvBusyError, a 500, for each of hundreds), where they are only refusals.
  const name = keyName(kvKey);
  // And a line of `limit` at most: past it, a call is refused at once, without KV. Else a burst of
  // a thousand waited each behind every earlier one (two round trips each, ~10 ms apiece on
  // managed KV) and answered 503 at its deadline instead of a prompt 429. Each of the `limit`
  // calls ahead is counted or refused before this one's turn; counted, they fill the window then
  // (unless the line took longer than the window to drain); refused, the window was full. So it
  // only refuses a call that waiting could have let in through a slot freed while the line
  // drained that no call ahead took - a call counted up to `windowMs` before leaving the window
  // just after those ahead were refused. It never lets more through. Retry-After is the window:
  // the calls ahead take their slots from now on.
  if (inLine(kv, name) >= limit) {
    return { ok: false, retryAfterSeconds: Math.ceil(windowMs / 1000) };
  }
  return await inTurn(
    kv,
    name,
    () =>
      // Named by the limit alone (`["export"]`): the rest of the key is whom it counts (a user's
      // id, a client's address), which must reach neither the logs nor Sentry, nor split the
      // digest.
      retrying(`rate limit ${keyName(key.slice(0, 1))}`, (commit) =>
        limit <= MAX_LOGGED
          ? countInLog(kv, kvKey, limit, windowMs, now(), commit)
          : countInBuckets(kv, kvKey, limit, windowMs, now(), commit)),
  );
}

/**
 * Throws as `checkKey` for a limit on `key`, whose longest KV key is a bucket's
 * (rate_limit_buckets.ts). Its first part, the limit's name, is the product's; the rest is whom it
 * counts, which may be a client's (an email, an id). The one check for `limitCalls` and for
 * `rateLimit` when it is made: a name that passes there never fails at a request.
 */
function checkLimitKey(where: () => string, key: Deno.KvKeyPart[]): void {
  checkKey(where, ["rate_limit", ...key, "buckets", 0], 2, key.length + 1);
}

/**
 * Counts a call at `t` in the log of the window's call times under `kvKey`, if it holds fewer
 * than `limit`; `undefined` when its commit lost a race (read again).
 */
async function countInLog(
  kv: Deno.Kv,
  kvKey: Deno.KvKey,
  limit: number,
  windowMs: number,
  t: number,
  commit: Commit,
): Promise<LimitResult | undefined> {
  const entry = await kv.get<number[]>(kvKey);
  const logged = entry.value ?? [];
  const calls = logged.map((at) => Math.min(at, t)).filter((at) => at > t - windowMs);
  if (calls.length >= limit) {
    // Times ahead of the clock are written back as now: else they would stay "now" until the
    // clock caught up with them, refusing the key all that while.
    if (logged.some((at) => at > t)) {
      const result = await commit(
        kv.atomic().check(entry).set(kvKey, calls, { expireIn: windowMs }),
      );
      if (!result.ok) return undefined;
    }
    // A slot frees when the call `limit` places before the end of the log leaves the window.
    const freeAt = calls[calls.length - limit] + windowMs;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((freeAt - t) / 1000)) };
  }
  calls.push(t); // the latest: the others are at most `t`
  const result = await commit(kv.atomic().check(entry).set(kvKey, calls, { expireIn: windowMs }));
  return result.ok ? { ok: true, remaining: limit - calls.length } : undefined;
}

/**
 * `rateLimit`'s options: the limit and its name.
 *
 * @example
 * ```ts
 * import type { RateLimitOptions } from "shell/data";
 *
 * const signing: RateLimitOptions = { name: "guestbook-sign", limit: 5, windowMs: 60_000 };
 * ```
 * @see docs/data.md - Rate limits
 */
export interface RateLimitOptions extends CallLimit {
  /** What is limited, e.g. `"guestbook-sign"`: each name counts on its own. */
  name: string;
}

/** Room kept in a limit's key for whom it counts: past it, a client's odd address is its 400. */
const CLIENT_ROOM = "x".repeat(64);

/**
 * Middleware: `limit` requests per client (`clientAddress`, an IPv6 one by its /64) in any
 * `windowMs`. Over it, 429 with `Retry-After` (a short page for a browser's form post, a line of
 * text for a script) and the request goes no further. In a folder's `_middleware.ts` it limits that
 * folder's pages and server actions. A request whose client is unknown (`app.request()`, with no
 * connection) counts as one client, "unknown": never as unlimited.
 *
 * @param options The limit and its name.
 * @returns The middleware.
 * @throws {RangeError} As `limitCalls`, when it is made (the module's import), not at a request.
 * @throws {TypeError} When `name` is too long for a KV key, when it is made.
 *
 * @example
 * ```ts
 * // routes/_guestbook/_middleware.ts
 * import { rateLimit } from "shell/data";
 *
 * export const handler = rateLimit({ name: "guestbook-sign", limit: 5, windowMs: 60_000 });
 * ```
 * @see docs/data.md - Rate limits
 */
export function rateLimit({ name, ...limit }: RateLimitOptions): Middleware {
  checkLimit(limit, `rateLimit("${name}")`);
  // Whom it counts is a client's address, not known yet: checked as one of the longest a client
  // has (an IPv6 /64 is at most 24 characters, "unknown" 7), so only a name too long fails here.
  checkLimitKey(() => `rateLimit(${nameOf(name)})`, [name, CLIENT_ROOM]);
  return async function rateLimit(c, next) {
    const client = limitedClient(c) ?? "unknown";
    const result = await limitCalls(kvOf(c), [name, client], limit);
    if (!result.ok) return tooManyRequests(c, result.retryAfterSeconds);
    await next();
  };
}
