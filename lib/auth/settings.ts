/**
 * @module
 * How an app's users and sessions behave: `AppOptions.auth`, with its defaults, resolved once per
 * app (the first request that needs it) together with what follows from the app's origins - the
 * session cookie's name and flags - and the app's bound on password hashes running at once.
 */
import type { Context } from "hono";
import { type CallLimit, checkLimit } from "../kv/rate_limit.ts";
import { type AppScope, scopeOf } from "../server/scope.ts";
import { type Limiter, limiter } from "./limiter.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The longest a browser keeps a cookie (Chrome's cap): no session or timer outlives it. */
const MOST_MS = 400 * DAY;

/**
 * The settings of an app's users and sessions (`AppOptions.auth`); every one has a default.
 *
 * @example
 * ```ts
 * import { createApp } from "shell/server";
 * import type { AuthOptions } from "shell/auth";
 * import manifest from "@/_build/manifest.gen.ts";
 *
 * const auth: AuthOptions = { idleTimeoutMs: 30 * 60_000, absoluteTimeoutMs: 8 * 3_600_000 };
 * const app = createApp(manifest, { root: Deno.cwd(), auth });
 * ```
 * @see docs/users.md - Settings and numbers
 */
export interface AuthOptions {
  /** A session unused this long ends (whole ms, 400 days at most): 24 hours. */
  idleTimeoutMs?: number;
  /** A session ends this long after sign-in, used or not (whole ms, 400 days at most): 7 days. */
  absoluteTimeoutMs?: number;
  /**
   * A session's idle timer is written back at most this often (whole ms, less than
   * `idleTimeoutMs`): 5 minutes. Shorter makes the idle timeout exact to the minute and costs a KV
   * write per page view more often.
   */
  refreshAfterMs?: number;
  /** Where `requireUser()` sends an anonymous visitor: `/login`. */
  loginPath?: string;
  /** Sign-in attempts per client (address): 20 in 15 minutes. */
  signInPerClient?: CallLimit;
  /**
   * Sign-in attempts per account (email, known or not), and per browser known for the account
   * (signed in with it in the last 30 days, whose attempts the account's limit does not count):
   * 10 in 15 minutes.
   */
  signInPerAccount?: CallLimit;
  /** Sign-ups per client: 10 an hour. */
  signUpPerClient?: CallLimit;
  /** Password hashes running at once (32 MiB each): 2; more wait. */
  hashesAtOnce?: number;
  /** Password hashes waiting for their turn: 16; past that, 503 with `Retry-After`. */
  hashesWaiting?: number;
  /**
   * Sessions one user keeps, 1 to 100: 20; signing in once more ends the oldest. As many browsers stay known
   * for their sign-in limit (devices.ts), the latest.
   */
  sessionsPerUser?: number;
  /** The clock, in ms since the epoch (tests). */
  now?: () => number;
}

export type AuthSettings = Required<Omit<AuthOptions, "hashesAtOnce" | "hashesWaiting">> & {
  /** The session cookie's name: `__Host-session` over https, `session` otherwise. */
  cookie: string;
  /** Whether the app's public origin is https: the cookie is `Secure` then. */
  secure: boolean;
  /** The bound on password hashes. */
  hashing: Limiter;
};

const DEFAULTS = {
  idleTimeoutMs: DAY,
  absoluteTimeoutMs: 7 * DAY,
  refreshAfterMs: 5 * MINUTE,
  loginPath: "/login",
  signInPerClient: { limit: 20, windowMs: 15 * MINUTE },
  signInPerAccount: { limit: 10, windowMs: 15 * MINUTE },
  signUpPerClient: { limit: 10, windowMs: HOUR },
  hashesAtOnce: 2,
  hashesWaiting: 16,
  sessionsPerUser: 20,
  now: Date.now,
} as const;

/**
 * The most sessions a user may keep: a sign-in reads 200 of theirs at most (`sessionsOf`), and
 * ends those past the bound in its own commit, two mutations each.
 */
const MAX_SESSIONS = 100;

/** One per app (its scope), made at the first ask. */
const resolved = new WeakMap<object, AuthSettings>();

/** The settings of the app answering `c`. */
export function authSettings(c: Context): AuthSettings {
  // The URL is parsed only at the first ask, not on every request that reads a session.
  return settingsOf(scopeOf(c), () => new URL(c.req.url).protocol);
}

/**
 * The settings of the app whose scope this is, resolved at the first ask - a request's, reached
 * with `ownProtocol`, or the test kit's `signInAs` - and the same after.
 */
export function settingsOf(scope: AppScope, ownProtocol: () => string): AuthSettings {
  let settings = resolved.get(scope);
  if (!settings) {
    settings = resolveAuth(scope.auth ?? {}, scope.origins, ownProtocol());
    resolved.set(scope, settings);
  }
  return settings;
}

/**
 * `options` with the defaults. Secure is decided by the app's configured public origin (the first
 * of `origins`), never by a header a client or proxy sends (`Host`, `X-Forwarded-Proto`); with no
 * origin configured, by the scheme the server itself was reached with.
 */
export function resolveAuth(
  options: AuthOptions,
  origins: string[] | undefined,
  ownProtocol: string,
): AuthSettings {
  const { hashesAtOnce, hashesWaiting, ...rest } = checkedAuth(options);
  const protocol = origins?.length ? new URL(origins[0]).protocol : ownProtocol;
  const secure = protocol === "https:";
  return {
    ...rest,
    secure,
    cookie: secure ? "__Host-session" : "session",
    hashing: limiter(hashesAtOnce, hashesWaiting),
  };
}

/**
 * `options` with the defaults, each checked: `createApp` calls it too, so that a setting KV cannot
 * keep stops the start rather than failing every request that reads the settings.
 */
export function checkedAuth(options: AuthOptions) {
  const checked = { ...DEFAULTS, ...withoutUndefined(options) };
  // Each is a session's `expireIn` in KV: Infinity ("never ends") or a fraction passed here, and
  // then every sign-in and sign-up threw KV's bare TypeError, a 500 each.
  for (const [name, ms] of Object.entries(checked).filter(([name]) => name.endsWith("Ms"))) {
    if (!(Number.isInteger(ms) && (ms as number) >= 1 && (ms as number) <= MOST_MS)) {
      throw new RangeError(
        `auth.${name} must be whole milliseconds from 1 to 400 days (${MOST_MS}), not ${ms}`,
      );
    }
  }
  // The idle timer moves on only when it is written back: at a refresh as long as the idle timeout
  // (an `idleTimeoutMs` of 2 minutes beside the default 5), a session in use every few seconds
  // ended at the idle timeout all the same.
  if (checked.refreshAfterMs >= checked.idleTimeoutMs) {
    throw new RangeError(
      `auth.refreshAfterMs (${checked.refreshAfterMs}, ${DEFAULTS.refreshAfterMs} unless set) must ` +
        `be less than auth.idleTimeoutMs (${checked.idleTimeoutMs}): the idle timer is written ` +
        "back only that often, so a session in use would end as if unused",
    );
  }
  for (const name of ["signInPerClient", "signInPerAccount", "signUpPerClient"] as const) {
    checkLimit(checked[name], `auth.${name}`);
  }
  const sessions = checked.sessionsPerUser;
  if (!(Number.isInteger(sessions) && sessions >= 1 && sessions <= MAX_SESSIONS)) {
    // 0, a fraction or NaN ended every other session at each sign-in, or none past the bound.
    throw new RangeError(
      `auth.sessionsPerUser must be a whole number from 1 to ${MAX_SESSIONS}, not ${sessions}`,
    );
  }
  if (!checked.loginPath.startsWith("/") || checked.loginPath.startsWith("//")) {
    throw new RangeError("auth.loginPath must be a path on the app's origin, such as /login");
  }
  return checked;
}

function withoutUndefined<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as T;
}
