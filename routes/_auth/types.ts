/**
 * @module
 * What the sign-up and log-in forms show after a try, shared by the actions and the island: types
 * only. It rides in a cookie when the form was posted without JavaScript, so it holds the email
 * typed, never the password.
 */
import type { CredentialErrors } from "shell/auth";

export interface AuthFormState {
  /** What was wrong, by field (`email`, `password`) or for the form. */
  errors?: CredentialErrors;
  /** The email as typed, back into the field. */
  email?: string;
  /** Set when the island was told to wait (429, 503): what to say. */
  wait?: string;
}
