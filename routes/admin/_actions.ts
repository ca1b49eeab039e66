"use server";
/**
 * @module
 * An action behind `routes/admin/_middleware.ts`: a call without the credentials is refused with
 * 401 before it runs. It reads what the middleware set through `requestContext()`.
 */
import { requestContext } from "shell";

// deno-lint-ignore require-await -- every server action is async, whether or not it awaits
export async function whoAmI(): Promise<string> {
  return String(requestContext().get("user"));
}
