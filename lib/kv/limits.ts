/**
 * @module
 * Deno KV's size limits, measured as KV measures them (exactly), so that input too large is refused
 * before KV sees it: as a field error by the caller's validation, or else by `assertFits` with a
 * `KvLimitError` that says what and how large, where KV would throw a bare `TypeError`.
 */
import { serialize } from "node:v8";

/**
 * Largest serialized value KV accepts, in bytes.
 *
 * @example
 * ```ts
 * import { MAX_VALUE_BYTES } from "shell/data";
 *
 * console.log(`a value holds at most ${MAX_VALUE_BYTES / 1024} KiB`);
 * ```
 * @see docs/data.md - Limits and faults
 */
export const MAX_VALUE_BYTES = 65_536;
/**
 * Largest encoded key KV writes, in bytes.
 *
 * @example
 * ```ts
 * import { MAX_KEY_BYTES } from "shell/data";
 *
 * const tooLong = (name: string) => new TextEncoder().encode(name).length > MAX_KEY_BYTES / 2;
 * ```
 * @see docs/data.md - Limits and faults
 */
export const MAX_KEY_BYTES = 2_048;

/**
 * The most bytes of keys one commit sets, in all (its deletes and checks are not counted): past
 * it KV throws a bare `TypeError` ("Total key size too large"), whatever the count of mutations.
 */
export const MAX_SET_KEYS_BYTES = 81_920;

/**
 * The longest the shell keeps a key by expiry (a rate limit's window, a collection's change
 * events): a year, well within what KV's `expireIn` takes (it refuses 10^16 ms).
 */
export const MAX_EXPIRE_MS = 366 * 24 * 60 * 60 * 1000;

/**
 * Refused before KV saw it: the key or value is over KV's limit. Its message says which and how
 * large, where KV would throw a bare `TypeError`.
 *
 * @example
 * ```ts
 * import { assertFits, KvLimitError } from "shell/data";
 *
 * try {
 *   assertFits(["notes", 1], "x".repeat(100_000));
 * } catch (error) {
 *   if (error instanceof KvLimitError) console.log(error.message);
 * }
 * ```
 * @see docs/data.md - Limits and faults
 */
export class KvLimitError extends RangeError {
  /** `"KvLimitError"`. */
  override name = "KvLimitError";
}

/** The value's size as KV stores it: V8's serializer, which is what KV uses. */
export function valueSize(value: unknown): number {
  return serialize(value).length;
}

const encoder = new TextEncoder();

/** The key's encoded size (tuple encoding: a tag byte per part, NUL-escaped, NUL-terminated). */
export function keySize(key: Deno.KvKey): number {
  let size = 0;
  for (const part of key) {
    if (typeof part === "string" || part instanceof Uint8Array) {
      const bytes = typeof part === "string" ? encoder.encode(part) : part;
      size += 2 + bytes.length + bytes.filter((b) => b === 0).length;
    } else if (typeof part === "number") size += 9;
    else if (typeof part === "bigint") size += 2 + Math.ceil(part.toString(16).length / 2);
    else size += 1; // boolean
  }
  return size;
}

/**
 * Throws a {@link KvLimitError} when `key` (and `value`, if given) would not fit in KV, measured
 * exactly as KV measures them. For input without a schema's length limit.
 *
 * @param key The key to check.
 * @param value The value to check, if any.
 * @throws {KvLimitError} When either is over KV's limit.
 *
 * @example
 * ```ts
 * import { assertFits } from "shell/data";
 *
 * const bio = "a few words";
 * assertFits(["profile", "ada"], { bio }); // throws KvLimitError when too large
 * ```
 * @see docs/data.md - Limits and faults
 */
export function assertFits(key: Deno.KvKey, ...value: [unknown?]): void {
  const keyBytes = keySize(key);
  if (keyBytes > MAX_KEY_BYTES) {
    throw new KvLimitError(`KV key too large: ${keyBytes} bytes encoded (max ${MAX_KEY_BYTES})`);
  }
  if (value.length === 0) return;
  const valueBytes = valueSize(value[0]);
  if (valueBytes > MAX_VALUE_BYTES) {
    throw new KvLimitError(
      `KV value too large: ${valueBytes} bytes serialized (max ${MAX_VALUE_BYTES})`,
    );
  }
}
