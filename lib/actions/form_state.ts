/**
 * @module
 * What a form action returned, carried across the 303 of a post made with JavaScript off, so the
 * page it lands on shows it (validation errors, typically). React's own mechanism does the
 * showing: the page renders with `formState`, and the form's `useActionState` starts from the
 * returned state. In between, the state rides in a short-lived, signed, HttpOnly cookie scoped to
 * the page's path, read once by the next GET of that page and cleared.
 */
import { parse, stringify } from "devalue";
import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { ReactFormState as FormState } from "react-dom/client";
import { log } from "../log.ts";

export type { FormState };

/** React's form state, opaque in its types: what the action returned and whose form it is. */
export function formState(state: unknown, key: string, id: string, bound: number): FormState {
  return [state, key, id, bound] as unknown as FormState;
}

declare module "hono" {
  interface ContextVariableMap {
    /** Set when the request carries the state of a form posted with JavaScript off. */
    formState: FormState;
  }
}

const COOKIE = "app-form-state";
const MAX_AGE = 60;
// Browsers keep cookies up to 4096 bytes, name and attributes included.
const MAX_VALUE = 3800;

interface Flash {
  path: string;
  state: FormState;
}

/** Stores `state` for the next GET of `path` (the page the form was on). */
export function flashFormState(c: Context, secret: string, path: string, state: FormState): void {
  let value: string;
  try {
    const payload = encode(stringify({ path, state } satisfies Flash));
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
    path,
    maxAge: MAX_AGE,
    httpOnly: true,
    sameSite: "Lax",
    secure: new URL(c.req.url).protocol === "https:",
  });
}

/**
 * Middleware: a GET that carries a valid state for its own path gets it as `c.var.formState`
 * (for the renderer), and a response that clears it and is never cached.
 */
export function restoreFormState(secret: string): MiddlewareHandler {
  return async function restoreFormState(c, next) {
    if (c.req.method !== "GET" || !c.req.header("cookie")?.includes(COOKIE)) return next();
    const flash = verify(secret, getCookie(c, COOKIE));
    if (!flash || flash.path !== c.req.path) return next();
    c.set("formState", flash.state);
    await next();
    deleteCookie(c, COOKIE, { path: flash.path });
    c.header("Cache-Control", "no-store");
  };
}

function verify(secret: string, value: string | undefined): Flash | undefined {
  const [payload, signature] = value?.split(".") ?? [];
  if (!payload || !signature) return undefined;
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  return parse(Buffer.from(payload, "base64url").toString());
}

function sign(secret: string, payload: string): string {
  return createHmac("sha256", secret).update(payload).digest("base64url");
}

function encode(text: string): string {
  return Buffer.from(text).toString("base64url");
}
