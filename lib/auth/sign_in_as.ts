/**
 * @module
 * A sign-in without a password, for the test kit's `TestClient.signInAs` alone: the user as stored
 * (their roles too), a session begun by `startSession` with the app's own settings - the same KV
 * records, expiry and per-user bound as a sign-in through the form, the client's old session ended
 * in the same commit - and the cookies `signIn` sets, handed back instead of put on a response. It
 * costs no password hash: a product's tests sign in as often as they like, in milliseconds.
 *
 * Two ways in: the app in this process (`signInInProcess`: its own store and settings), or a
 * server in another process that shares the test's KV file (`signInToStore`: the store the test
 * opened, and the settings the entry points give every app - the defaults, the cookie's name and
 * flags by the origin's scheme). A store that is not the server's shows at the first request that
 * reads the session: the server clears the cookie of a session the test's store still holds
 * (`foundBy`).
 *
 * Safe to ship: nothing routes to it - it takes the very object `createApp` returned, or a store
 * the test opened itself, which no request can name or reach - and no entry point an app imports
 * exports it; only `shell/testing` calls it, and an app's modules do not import the test kit.
 */
import { scopeOfApp } from "../server/scope.ts";
import { markOf, sessionCookies } from "./cookie.ts";
import { normalizeEmail } from "./credentials.ts";
import { readSession, startSession } from "./sessions.ts";
import { type AuthSettings, resolveAuth, settingsOf } from "./settings.ts";
import { isToken, tokenHash } from "./token.ts";
import { findUser, publicUser, type User } from "./users.ts";

/** The client signing in: where it is, and the cookies it holds. */
export interface SigningClient {
  /** Its origin (`http://localhost` in-process). */
  readonly origin: string;
  /** The value of the cookie `name` it would send to `url`. */
  cookie(name: string, url: string): Promise<string | undefined>;
}

/** A sign-in's outcome: who, and the `Set-Cookie` values for the client's jar, set from `url`. */
export interface SignedIn {
  user: User;
  cookies: string[];
  /** Where the cookies come from: the app's public origin when it has one, else the client's. */
  url: string;
  /** The session cookie's name and the token it holds. */
  cookie: { name: string; token: string };
}

/**
 * Signs `client` in to `app` (what `createApp` returned, in this process) as the stored user
 * with `who`'s email. Throws for anything but such an app, for an app without a KV store (no
 * users, no sessions) and for an email with no account.
 */
export async function signInInProcess(
  app: object,
  who: { readonly email: string } | string,
  client: SigningClient,
): Promise<SignedIn> {
  const scope = scopeOfApp(app);
  if (!scope) {
    throw new TypeError(
      "signInAs signs in to an app made by createApp in this process: new TestClient(app)",
    );
  }
  const { kv } = scope;
  if (!kv) {
    throw new Error(
      "This app was made without a KV store, so it has no users or sessions to sign in to: " +
        "pass `kv` to createApp",
    );
  }
  const settings = settingsOf(scope, () => new URL(client.origin).protocol);
  return await begin(kv, settings, scope.origins?.[0] ?? client.origin, who, client);
}

/**
 * Signs `client` in to the server at its origin through `kv`, the store that server was started
 * with (`KV_PATH`), opened by the test: the session the entry points' app would begin (default
 * settings; `__Host-` and `Secure` for an https origin). Throws for an email with no account.
 */
export async function signInToStore(
  kv: Deno.Kv,
  who: { readonly email: string } | string,
  client: SigningClient,
): Promise<SignedIn> {
  return await begin(kv, storeSettings(client.origin), client.origin, who, client);
}

/**
 * Whether the server found the session `signInToStore` began, judged by its answer's
 * `Set-Cookie` values: it clears the cookie of a session it cannot find. `undefined` when the
 * answer says nothing of that cookie; `false` when it cleared it while the test's store still
 * holds the session - the server reads another store.
 */
export async function foundBy(
  setCookies: string[],
  kv: Deno.Kv,
  origin: string,
  cookie: SignedIn["cookie"],
): Promise<boolean | undefined> {
  const cleared = setCookies.some((line) => line.startsWith(`${cookie.name}=;`));
  if (!cleared) return undefined;
  const held = await readSession(kv, tokenHash(cookie.token), storeSettings(origin), false);
  return held === undefined;
}

/** What the entry points' app resolves for a request to `origin`: the defaults, by its scheme. */
function storeSettings(origin: string): AuthSettings {
  return resolveAuth({}, undefined, new URL(origin).protocol);
}

async function begin(
  kv: Deno.Kv,
  settings: AuthSettings,
  url: string,
  who: { readonly email: string } | string,
  client: SigningClient,
): Promise<SignedIn> {
  const given = typeof who === "string" ? who : who.email;
  const email = normalizeEmail(given);
  const stored = email === undefined ? undefined : await findUser(kv, email);
  if (!stored) {
    throw new RangeError(
      `No user has the email ${given} in this app's store: make them first (createUser)`,
    );
  }
  // As at a sign-in through the form, the session the client had ends (a new token, always).
  const held = await client.cookie(settings.cookie, url);
  const previous = isToken(held)
    ? await readSession(kv, tokenHash(held), settings, false)
    : undefined;
  const started = await startSession(kv, publicUser(stored), settings, previous);
  if (!started) {
    throw new RangeError(`The user with the email ${given} was deleted as they signed in`);
  }
  const { token, session } = started;
  const cookies = sessionCookies(settings, token, markOf(session.record.createdAt));
  // Who the session holds: its roles are read as it commits, a change of roles meanwhile included.
  const { userId, name, roles } = session.record;
  const user: User = { id: userId, email: session.record.email, name, roles: [...roles] };
  return { user, cookies, url, cookie: { name: settings.cookie, token } };
}
