/**
 * @module
 * What a form action returned, carried across the 303 of a post made with JavaScript off, so the
 * page it lands on shows it (validation errors, typically). React's own mechanism does the
 * showing: the page renders with `formState`, and the form's `useActionState` starts from the
 * returned state. In between, the state rides in a signed, HttpOnly cookie, read by the next GET of
 * that page and cleared. The signed payload names the page and carries its own expiry and a one-time
 * id: a replayed cookie is refused once it expired or was used (`claim`), whatever the browser does
 * with the cookie's own `Max-Age`. The cookie's path is `/`, not the page's: a path comes from the
 * client's `Referer`, and some characters (`;`) cannot be a cookie path.
 */
import { parse, stringify } from "devalue";
import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { ReactFormState as FormState } from "react-dom/client";
import { log } from "../server/log.ts";
import { internalsOf } from "../server/internals.ts";

export type { FormState };

/** React's form state, opaque in its types: what the action returned and whose form it is. */
export function formState(state: unknown, key: string, id: string, bound: number): FormState {
  return [state, key, id, bound] as unknown as FormState;
}

declare module "../server/internals.ts" {
  interface Internals {
    /** Set when the request carries the state of a form posted with JavaScript off. */
    formState: FormState;
  }
}

const COOKIE = "app-form-state";
const MAX_AGE_SECONDS = 60;
// Browsers keep cookies up to 4096 bytes, name and attributes included.
const MAX_VALUE = 3800;

interface Flash {
  /** The page's path, as the URL has it (percent-encoded). */
  path: string;
  state: FormState;
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

/** Stores `state` for the next GET of `path` (the page the form was on). */
export function flashFormState(
  c: Context,
  secret: string,
  path: string,
  state: FormState,
  secure: boolean,
): void {
  let value: string;
  try {
    const flash: Flash = {
      path,
      state,
      expires: Date.now() + MAX_AGE_SECONDS * 1000,
      id: crypto.randomUUID(),
    };
    const payload = encode(stringify(flash));
    value = `${payload}.${sign(secret, payload)}`;
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
  setCookie(c, COOKIE, value, {
    path: "/",
    maxAge: MAX_AGE_SECONDS,
    httpOnly: true,
    sameSite: "Lax",
    secure,
  });
}

/**
 * Middleware: a GET that carries a valid state for its own path gets it in its private record
 * (`formState`, for the renderer), and a response that clears it and is never cached.
 */
export function restoreFormState(secret: string, claim: Claim): MiddlewareHandler {
  return async function restoreFormState(c, next) {
    if (c.req.method !== "GET" || !c.req.header("cookie")?.includes(COOKIE)) return next();
    const flash = verify(secret, getCookie(c, COOKIE));
    if (!flash || flash.path !== new URL(c.req.url).pathname) return next();
    if (flash.expires > Date.now() && await claim(flash.id, flash.expires)) {
      internalsOf(c).formState = flash.state;
    }
    await next();
    deleteCookie(c, COOKIE, { path: "/" });
    c.header("Cache-Control", "no-store");
  };
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
