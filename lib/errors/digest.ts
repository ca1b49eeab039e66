/**
 * @module
 * Digests: a short name for a server failure that a user can read aloud and ops can search the
 * logs for. The same error (message and stack) always gets the same digest.
 */
import { createHash } from "node:crypto";

// Crockford's base32: no I, L, O or U, so nothing is misread over the phone.
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

export function digestOf(error: unknown): string {
  const { message, stack } = describe(error);
  const bytes = createHash("sha256").update(`${message}\n${stack}`).digest();
  let digest = "";
  for (let i = 0; i < 10; i++) digest += ALPHABET[bytes[i] & 31];
  return digest;
}

export interface ErrorDescription {
  name: string;
  message: string;
  stack: string;
}

/** Name, message and stack of anything thrown, Error or not. */
export function describe(error: unknown): ErrorDescription {
  if (error instanceof Error) {
    return { name: error.name, message: error.message, stack: error.stack ?? "" };
  }
  let message: string;
  try {
    message = typeof error === "string" ? error : JSON.stringify(error) ?? String(error);
  } catch {
    message = String(error);
  }
  return { name: "NonError", message, stack: "" };
}
