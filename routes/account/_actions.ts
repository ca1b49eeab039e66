"use server";
/**
 * @module
 * "Delete account", behind `routes/account/_middleware.ts`: only a signed-in user's call runs, and
 * it deletes that user - never one the form names. The user types their email to confirm, so a
 * stray click deletes nothing. The example keeps nothing else of a user's (the board is the team's),
 * so `deleteUser` has no `also`; a product passes its own (docs/users.md, Deleting a user).
 */
import { formOf, httpError, redirect } from "shell";
import { deleteUser, normalizeEmail, signOut, UnknownUserError, userOf } from "shell/auth";
import { kvOf } from "shell/data";
import { define } from "../_define.ts";

export async function deleteAccount(form: FormData): Promise<void> {
  const c = define.context();
  const user = userOf(c.var);
  const typed = formOf(form).get("confirm");
  if (typeof typed !== "string" || normalizeEmail(typed) !== user.email) {
    throw httpError(400, "Type your email exactly to confirm: the account was not deleted.");
  }
  // With the id: a deletion cut short and finished meanwhile, after the email signed up again,
  // leaves the new account alone. Already gone (a second click, the form on another device) is done:
  // the user asked for exactly that, and was shown "Page not found" (UnknownUserError's 404).
  try {
    await deleteUser(kvOf(c), user.email, { id: user.id });
  } catch (error) {
    if (!(error instanceof UnknownUserError)) throw error;
  }
  await signOut(c); // this browser's cookie, and the pages it kept (its session is gone already)
  redirect("/");
}
