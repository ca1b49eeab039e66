/**
 * @module
 * Digests: a short name for a server failure that a user can read aloud and ops can search the
 * logs for. The same error (message and stack) always gets the same digest, so repeats of one bug
 * share it and `request_id` tells the occurrences apart.
 */
import { createHash } from "node:crypto";

// Crockford's base32: no I, L, O or U, so nothing is misread over the phone; its hyphen groups
// the ten characters (50 bits) as two readable halves: `7KQ2M-XF9PA`.
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

export function digestOf(error: unknown): string {
  const { message, stack } = describe(error);
  const bytes = createHash("sha256").update(`${message}\n${stack}`).digest();
  let digest = "";
  for (let i = 0; i < 10; i++) digest += (i === 5 ? "-" : "") + ALPHABET[bytes[i] & 31];
  return digest;
}

export interface ErrorDescription {
  name: string;
  message: string;
  stack: string;
}

/** Name, message and stack of anything thrown, Error or not (`throw "oops"`, `throw {code: 1}`). */
export function describe(error: unknown): ErrorDescription {
  if (error instanceof Error) {
    return { name: error.name, message: error.message, stack: error.stack ?? "" };
  }
  let message: string;
  try {
    message = typeof error === "string" ? error : JSON.stringify(error) ?? String(error);
  } catch { // cycles, BigInt
    message = Object.prototype.toString.call(error);
  }
  return { name: "NonError", message, stack: "" };
}
