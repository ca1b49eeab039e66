/**
 * @module
 * Session tokens: 32 random bytes from `crypto.getRandomValues`, base64url in the cookie. The store
 * keeps only their SHA-256: a token has 256 bits of entropy, so a fast hash is enough to make a
 * copy of the store useless for signing in (a slow, salted hash is for what people choose).
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";

const TOKEN_BYTES = 32;
/** 32 bytes in base64url, unpadded. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** A new session token, for the cookie only. */
export function newToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES))).toString("base64url");
}

/** Whether a cookie's value has a token's shape; anything else is never looked up. */
export function isToken(value: string | undefined): value is string {
  return value !== undefined && TOKEN.test(value);
}

/** What the store keeps of a token: its SHA-256, base64url. */
export function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}
