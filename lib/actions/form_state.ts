/**
 * @module
 * What a form posted with JavaScript off carries across the 303 back to its page: what its action
 * returned (validation errors, typically), or - when the action no longer exists (a deploy removed
 * or renamed it: `stale.ts`) - the values the user sent (`KeptInput`), so the page shows them
 * again. React's own mechanism shows the first: the page renders with `formState`, and the form's
 * `useActionState` starts from the returned state; the JSX runtime shows the second, in the page's
 * fields of the same names (`shared/kept_input.ts`). In between, it rides in a signed, HttpOnly
 * cookie, read by the next GET of that page and cleared. The signed payload names the page and
 * carries its own expiry and a one-time id: a replayed cookie is refused once it expired or was
 * used (`claim`), whatever the browser does with the cookie's own `Max-Age`. The cookie's path is
 * `/`, not the page's: a path comes from the client's `Referer`, and some characters (`;`) cannot
 * be a cookie path. Over https it is `__Host-app-form-state`, as the session's is `__Host-session`:
 * nothing binds a flash to a browser, so a flash an attacker had signed for their own post (what
 * they sent to a removed action, say) and planted as a plain cookie - from a sibling subdomain
 * (`Domain=`), or over plain http on the way - put their values in the victim's form under "check
 * what you entered and send it again"; a `__Host-` cookie only the app's own https origin can set.
 * The signing key is the app's (`Secret`): kept in KV, the same for every
 * process, instance and deploy, so a cookie set by one verifies on any other.
 */
import { parse, stringify } from "devalue";
import type { Context, MiddlewareHandler, Next } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { ReactFormState as FormState } from "react-dom/client";
import { internalsOf } from "../server/internals.ts";
import { log } from "../server/log.ts";
import { scopeOf } from "../server/scope.ts";
import type { KeptInput } from "../shared/kept_input.ts";

export type { FormState };

/** The key that signs the cookie, read when first needed (see `kv/secret.ts`). */
export type Secret = () => Promise<string>;

/** React's form state, opaque in its types: what the action returned and whose form it is. */
export function formState(state: unknown, key: string, id: string, bound: number): FormState {
  return [state, key, id, bound] as unknown as FormState;
}

declare module "../server/internals.ts" {
  interface Internals {
    /** Set when the request carries the state of a form posted with JavaScript off. */
    formState: FormState;
    /** Set when the request carries what was sent to an action that no longer exists. */
    keptInput: KeptInput;
  }
}

export const FORM_STATE_COOKIE = "app-form-state";
/** The name over https; it holds `FORM_STATE_COOKIE`, so a search of a header finds both. */
export const SECURE_FORM_STATE_COOKIE = `__Host-${FORM_STATE_COOKIE}`;

/** What the cookie carries to the page: one of the two, or both. */
export interface Carried {
  state?: FormState;
  kept?: KeptInput;
}
const MAX_AGE_SECONDS = 60;
// Browsers keep cookies up to 4096 bytes, name and attributes included.
const MAX_VALUE = 3800;

interface Flash extends Carried {
  /** The page's path, as the URL has it (percent-encoded). */
  path: string;
  /** Milliseconds since the epoch after which the state no longer applies. */
  expires: number;
  /** Names this flash, so that it applies once. */
  id: string;
}

/**
 * Marks `id` as used until `expires`: true the first time, false ever after. The state of a form
 * applies once, so a cookie replayed within its lifetime is refused too.
 */
export type Claim = (id: string, expires: number) => Promise<boolean>;

/** One process's memory of used ids: enough where one process answers every request. */
export function claimInMemory(): Claim {
  const used = new Map<string, number>();
  return (id, expires) => {
    const now = Date.now();
    for (const [old, until] of used) if (until < now) used.delete(old);
    if (used.has(id)) return Promise.resolve(false);
    used.set(id, expires);
    return Promise.resolve(true);
  };
}

/**
 * Stores what `carried` holds for the next GET of `path` (the page the form was on). Kept input
 * too large for the cookie loses its longest values first: the page still says why it reloaded.
 */
export async function flashFormState(
  c: Context,
  secret: Secret,
  path: string,
  carried: Carried,
  secure: boolean,
): Promise<void> {
  const key = await secret();
  const signed = (kept: KeptInput | undefined) => {
    const flash: Flash = {
      path,
      ...carried,
      kept,
      expires: Date.now() + MAX_AGE_SECONDS * 1000,
      id: crypto.randomUUID(),
    };
    const payload = encode(stringify(flash));
    return `${payload}.${sign(key, payload)}`;
  };
  let value: string;
  let kept = carried.kept;
  try {
    value = signed(kept);
    // Serialized at most a few times, each within a budget: a body of a mebibyte in hundreds of
    // fields costs one pass over it, not one per field.
    for (let budget = KEPT_CHARS; value.length > MAX_VALUE && kept && budget >= 0;) {
      kept = within(carried.kept!, budget);
      value = signed(kept);
      budget = budget > 0 ? Math.floor(budget / 2) - 1 : -1;
    }
    // Names alone too many: the sentence, at least.
    if (value.length > MAX_VALUE && kept) value = signed(kept = []);
  } catch (error) {
    log("warn", "a form action's result cannot be serialized for the page", {
      error: String(error),
    });
    return;
  }
  if (value.length > MAX_VALUE) {
    log("warn", "a form action's result is too large to show without JavaScript", {
      bytes: value.length,
    });
    return;
  }
  if (kept !== carried.kept) {
    // A client's form to any id no build has: ten lines a second at most (`request_log.ts`).
    scopeOf(c).refusals(
      "form cut",
      "what a form sent to a removed action is too large to show again in full",
      { fields: carried.kept!.length },
    );
  }
  setCookie(c, secure ? SECURE_FORM_STATE_COOKIE : FORM_STATE_COOKIE, value, {
    path: "/",
    maxAge: MAX_AGE_SECONDS,
    httpOnly: true,
    sameSite: "Lax",
    secure,
  });
}

/** Characters of kept values tried first when all of them do not fit. */
const KEPT_CHARS = 2_000;

/**
 * `kept` with values emptied, the longest first, until the rest hold at most `budget` characters
 * (the fields' names stay: the page still says why it reloaded).
 */
function within(kept: KeptInput, budget: number): KeptInput {
  const byLength = kept.map(([, text], i) => [text.length, i]).sort((a, b) => b[0] - a[0]);
  let total = kept.reduce((sum, [, text]) => sum + text.length, 0);
  const emptied = new Set<number>();
  for (const [length, i] of byLength) {
    if (total <= budget) break;
    emptied.add(i);
    total -= length;
  }
  return kept.map((entry, i) => emptied.has(i) ? [entry[0], ""] : entry);
}

/**
 * Middleware: a GET that carries a valid flash for its own path gets what it holds in its private
 * record (`formState`, `keptInput`: for the renderer), and a response that clears it and is never
 * cached. The plain cookie is read only where the app may be served over http (`origins`, unset:
 * the request's own): an app on https origins alone sets only the `__Host-` one.
 */
export function restoreFormState(
  secret: Secret,
  claim: Claim,
  origins: string[] | undefined,
): MiddlewareHandler {
  const httpsOnly = origins?.every((origin) => origin.startsWith("https:"));
  // Not `async` on the path of the requests it leaves alone (nearly all): no promise of its own.
  return function restoreFormState(c, next) {
    if (c.req.method !== "GET" || !c.req.header("cookie")?.includes(FORM_STATE_COOKIE)) {
      return next();
    }
    const plain = !(httpsOnly ?? c.req.url.startsWith("https:"));
    return restore(c, next, secret, claim, plain);
  };
}

async function restore(
  c: Context,
  next: Next,
  secret: Secret,
  claim: Claim,
  plain: boolean,
): Promise<void> {
  const secure = getCookie(c, SECURE_FORM_STATE_COOKIE);
  const value = secure ?? (plain ? getCookie(c, FORM_STATE_COOKIE) : undefined);
  const flash = verify(await secret(), value);
  if (!flash || flash.path !== new URL(c.req.url).pathname) return next();
  if (flash.expires > Date.now() && await claim(flash.id, flash.expires)) {
    if (flash.state) internalsOf(c).formState = flash.state;
    if (flash.kept) internalsOf(c).keptInput = flash.kept;
  }
  await next();
  if (secure === undefined) deleteCookie(c, FORM_STATE_COOKIE, { path: "/" });
  else deleteCookie(c, SECURE_FORM_STATE_COOKIE, { path: "/", secure: true });
  c.header("Cache-Control", "no-store");
}

function verify(secret: string, value: string | undefined): Flash | undefined {
  const [payload, signature] = value?.split(".") ?? [];
  if (!payload || !signature) return undefined;
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  const flash: Flash = parse(Buffer.from(payload, "base64url").toString());
  return typeof flash?.expires === "number" && typeof flash.id === "string" ? flash : undefined;
}

function sign(secret: string, payload: string): string {
  return createHmac("sha256", secret).update(payload).digest("base64url");
}

function encode(text: string): string {
  return Buffer.from(text).toString("base64url");
}
