"use server";
/**
 * @module
 * An action behind `routes/admin/_middleware.ts`: a call without the role is refused before it
 * runs (401 anonymous, 403 without the role). It reads the user the guard put on the state.
 */
import { define } from "../_define.ts";

// deno-lint-ignore require-await -- every server action is async, whether or not it awaits
export async function whoAmI(): Promise<string> {
  return define.context().var.user?.email ?? "nobody";
}
