"use server";
/**
 * @module
 * Probe actions: they echo their arguments, fail, redirect or keep form state, and each logs
 * `{"probe": name}` when it runs, so a test can prove a refused request never reached one.
 * In-process tests register this module as it is; `fixtures.ts` writes it into the browser
 * tests' copy as `routes/_probe/actions.ts` (the same depth: its import resolves to the copy's
 * `lib/`). `SECRET` (`fixtures.ts`' `ACTION_SECRET`) is in a failure's message, never in a
 * response.
 */
import { deleteCookie, setCookie } from "hono/cookie";
import { httpError, redirect, requestContext } from "../../lib/mod.ts";

const SECRET = "s3cret-act10n-failure";

const ran = (name: string) => console.log(JSON.stringify({ probe: name }));

// deno-lint-ignore require-await -- every server action is async, whether or not it awaits
export async function echo(...args: unknown[]): Promise<unknown[]> {
  ran("echo");
  return args;
}

export async function upload(form: FormData): Promise<Record<string, unknown>> {
  ran("upload");
  const file = form.get("file") as File;
  return { fields: [...form.keys()], name: file.name, text: await file.text() };
}

// deno-lint-ignore require-await
export async function fail(): Promise<never> {
  ran("fail");
  throw new Error(SECRET);
}

// deno-lint-ignore require-await
export async function toAbout(): Promise<never> {
  ran("toAbout");
  return redirect("/about");
}

// deno-lint-ignore require-await
export async function remember(_previous: unknown, form: FormData): Promise<{ said: unknown }> {
  ran("remember");
  return { said: form.get("said") };
}

// deno-lint-ignore require-await
export const late = async (_form: FormData): Promise<void> => {
  ran("late");
};

/** Sets a cookie, as signing in does: its answer is more than its result. */
// deno-lint-ignore require-await
export async function welcome(): Promise<string> {
  ran("welcome");
  setCookie(requestContext(), "welcomed", "yes", { path: "/" });
  return "welcome";
}

/** Refuses, as an action's check does (an expected error). */
// deno-lint-ignore require-await
export async function refuse(_form: FormData): Promise<never> {
  ran("refuse");
  throw httpError(403, "Not now");
}

/** Deletes the cookie `welcome` set, as signing out does. */
// deno-lint-ignore require-await
export async function farewell(): Promise<string> {
  ran("farewell");
  deleteCookie(requestContext(), "welcomed", { path: "/" });
  return "farewell";
}
