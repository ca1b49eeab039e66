"use server";
/**
 * @module
 * Signing up, in and out: server actions over `shell/auth`, for forms that work with and without
 * JavaScript. A form's mistakes come back as its state; a success goes on to `next` (only ever a
 * path of this app: `safeNext`) or the account page.
 */
import { formOf, redirect, requestContext } from "shell";
import { safeNext, signIn, signOut, signOutEverywhere, signUp } from "shell/auth";
import type { AuthFormState } from "./types.ts";

export async function join(_previous: AuthFormState, form: FormData): Promise<AuthFormState> {
  const result = await signUp(requestContext(), fieldsOf(form));
  if (!result.ok) return { errors: result.errors, email: emailOf(form) };
  redirect(safeNext(form.get("next"), "/account"));
}

export async function logIn(_previous: AuthFormState, form: FormData): Promise<AuthFormState> {
  const result = await signIn(requestContext(), fieldsOf(form));
  if (!result.ok) return { errors: result.errors, email: emailOf(form) };
  redirect(safeNext(form.get("next"), "/account"));
}

export async function logOut(): Promise<void> {
  await signOut(requestContext());
  redirect("/");
}

export async function logOutEverywhere(): Promise<void> {
  await signOutEverywhere(requestContext());
  redirect("/login");
}

/** Anyone can post to an action: a call by hand without a form is refused (400) here. */
function fieldsOf(form: FormData) {
  const fields = formOf(form);
  return { email: fields.get("email"), password: fields.get("password") };
}

/** The email as typed, back into the form: never so long that it outgrows the state's cookie. */
function emailOf(form: FormData): string {
  const email = form.get("email");
  return typeof email === "string" ? email.slice(0, 320) : "";
}
