/**
 * @module
 * Password hashes: scrypt from `node:crypto` - Deno's own native implementation, run off the main
 * thread, so a hash blocks no request, and it loads on Deno Deploy, which refuses native npm addons
 * (`@node-rs/argon2`). The parameters are one of OWASP's equivalent scrypt settings: N=2^15, r=8,
 * p=3, 32 MiB a hash (N=2^17, p=1 would take 128 MiB, too much for a 512 MB Deploy isolate when a
 * few run at once). A hash is stored as a PHC string (`$scrypt$ln=15,r=8,p=3$salt$key`), so its
 * parameters travel with it and an older one is upgraded at the next sign-in (`needsRehash`).
 * Passwords are normalised (NFKC, as NIST SP 800-63B advises) so that one typed on another keyboard
 * still matches; keys are compared in constant time.
 */
import { Buffer } from "node:buffer";
import { scrypt, timingSafeEqual } from "node:crypto";

interface Params {
  /** log2 of N, scrypt's cost. */
  ln: number;
  r: number;
  p: number;
}

/** What new hashes use. */
export const PARAMS: Readonly<Params> = { ln: 15, r: 8, p: 3 };

const SALT_BYTES = 16;
const KEY_BYTES = 32;
const PHC =
  /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{22})\$([A-Za-z0-9+/]{43})$/;

/** A stored hash that is not one of ours (a corrupted record): a bug to hear about. */
class UnknownHashError extends Error {
  override name = "UnknownHashError";
  constructor() {
    super("the stored password hash is not a scrypt PHC string this app can verify");
  }
}

/** The scrypt hash of `password`, with a fresh salt, as a PHC string. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const key = await derive(password, salt, PARAMS);
  const { ln, r, p } = PARAMS;
  return `$scrypt$ln=${ln},r=${r},p=${p}$${b64(salt)}$${b64(key)}`;
}

/** Whether `password` is the one `stored` was made from; the keys are compared in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const { params, salt, key } = parse(stored);
  const derived = await derive(password, salt, params);
  return timingSafeEqual(derived, key);
}

/** Whether `stored` was made with other parameters than new hashes use. */
export function needsRehash(stored: string): boolean {
  const { params } = parse(stored);
  return params.ln !== PARAMS.ln || params.r !== PARAMS.r || params.p !== PARAMS.p;
}

function parse(stored: string): { params: Params; salt: Buffer; key: Buffer } {
  const match = PHC.exec(stored);
  if (!match) throw new UnknownHashError();
  const [ln, r, p] = [match[1], match[2], match[3]].map(Number);
  // Bounds, so that no stored value can ask for gigabytes: 2^20 × 8 × 128 B is 1 GiB.
  if (ln < 10 || ln > 20 || r < 1 || r > 16 || p < 1 || p > 16) throw new UnknownHashError();
  return {
    params: { ln, r, p },
    salt: Buffer.from(match[4], "base64"),
    key: Buffer.from(match[5], "base64"),
  };
}

/** Hashes begun in this process: every hash and check goes through `derive`. */
let begun = 0;

/**
 * How many password hashes this process has begun (made or checked): what tests count to show
 * that something costs none (the test kit's `signInAs`).
 */
export function hashesBegun(): number {
  return begun;
}

function derive(password: string, salt: Uint8Array, { ln, r, p }: Params): Promise<Buffer> {
  begun++;
  const N = 2 ** ln;
  return new Promise((resolve, reject) =>
    scrypt(
      password.normalize("NFKC"),
      salt,
      KEY_BYTES,
      // What scrypt needs is 128 × N × r bytes; node's default ceiling (32 MiB) is just below it.
      { N, r, p, maxmem: 2 * 128 * N * r },
      (error, key) => error ? reject(error) : resolve(key),
    )
  );
}

/** Base64 without padding, as PHC strings write it. */
function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64").replace(/=+$/, "");
}
