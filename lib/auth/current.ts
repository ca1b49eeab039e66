/**
 * @module
 * Who is asking: the request's session, read lazily and once. A request without the session
 * cookie costs nothing; one with it costs one KV read, the first time anything asks - a guard, a
 * handler, an action - and every later ask in the same request gets the same answer from the
 * request's private record. A page that never asks reads nothing. A cookie whose session is gone
 * (ended, expired) is cleared on the response. A browser's prefetch reads the session but never
 * moves its idle timer.
 */
import type { Context } from "hono";
import { kvOf } from "../kv/access.ts";
import { internalsOf } from "../server/internals.ts";
import { type AnyContext, contextOf } from "../server/scope.ts";
import { isSpeculative } from "../server/speculation.ts";
import { clearSessionCookie, markOf, tokenOf } from "./cookie.ts";
import { readSession, type Session } from "./sessions.ts";
import { authSettings } from "./settings.ts";
import { tokenHash } from "./token.ts";
import type { User } from "./users.ts";

declare module "../server/internals.ts" {
  interface Internals {
    /** The request's session, once asked for. */
    session: Promise<Session | undefined>;
    /** The mark of the session the request found or began (cookie.ts): its page checks it. */
    sessionMark: string;
  }
}

/** The request's session, read at most once. */
export function sessionOf(c: Context): Promise<Session | undefined> {
  const internals = internalsOf(c);
  return internals.session ??= load(c);
}

/** What later asks in this request get: the new session (after sign-in) or none (sign-out). */
export function replaceSession(c: Context, session: Session | undefined): void {
  const internals = internalsOf(c);
  internals.session = Promise.resolve(session);
  internals.sessionMark = session && markOf(session.record.createdAt);
}

async function load(c: Context): Promise<Session | undefined> {
  const settings = authSettings(c);
  const token = tokenOf(c, settings);
  if (token === undefined) return undefined;
  const touch = !isSpeculative(c.req.raw);
  const session = await readSession(kvOf(c), tokenHash(token), settings, touch);
  if (!session) clearSessionCookie(c, settings);
  else internalsOf(c).sessionMark = markOf(session.record.createdAt);
  return session;
}

/**
 * The signed-in user of this request, or `undefined`: read from the session in KV the first time
 * anything in the request asks (one KV read; none without the session cookie), the same answer
 * after. In a folder guarded by `requireUser()` or `requireRole()`, `state.user` holds it already.
 *
 * @param from A handler's `ctx`, a middleware's `c`, or `requestContext()` in a server action.
 * @returns The user, or `undefined` when nobody is signed in.
 *
 * @example
 * ```ts
 * // routes/_notes/actions.ts
 * "use server";
 * import { httpError, requestContext } from "shell";
 * import { currentUser } from "shell/auth";
 * import { kvOf } from "shell/data";
 *
 * export async function addNote(text: string): Promise<void> {
 *   const c = requestContext();
 *   const user = await currentUser(c);
 *   if (!user) throw httpError(401, "Sign in to take notes");
 *   await kvOf(c).set(["notes", user.id, crypto.randomUUID()], text);
 * }
 * ```
 * @see docs/users.md - Who is asking
 */
export async function currentUser(from: AnyContext): Promise<User | undefined> {
  const session = await sessionOf(contextOf(from));
  if (!session) return undefined;
  const { userId, email, name, roles } = session.record;
  return { id: userId, email, name, roles };
}
