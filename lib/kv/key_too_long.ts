/**
 * @module
 * A KV key too long for what a request gave it - a client's id as a job's key, whom a rate limit
 * counts, a route param naming a log - refused as the client's mistake: an expected 400 (code
 * `too_long`), no digest, no Sentry event, where KV's bare error was a 500. A key too long however
 * short the request's parts (a limit's, job's or log's own name) is the developer's: a `TypeError`
 * naming it. A key's parts are the developer's up to its name and the request's after it.
 */
import { HttpError } from "../shared/http_error.ts";
import { keySize, MAX_KEY_BYTES } from "./limits.ts";

/**
 * A key past KV's limit by what a request gave: a 400 (code `"too_long"`) uncaught in a request.
 * `where` (the limit, job or log) and `bytes` say which, for the developer, never in the message.
 *
 * @example
 * ```ts
 * import { KeyTooLongError, limitCalls } from "shell/data";
 *
 * const kv = await Deno.openKv(":memory:");
 * try {
 *   await limitCalls(kv, ["export", "x".repeat(3_000)], { limit: 3, windowMs: 60_000 });
 * } catch (error) {
 *   if (error instanceof KeyTooLongError) console.log(error.status, error.where); // 400 limitCalls("export")
 * }
 * ```
 * @see docs/data.md - Limits and faults
 */
export class KeyTooLongError extends HttpError {
  /**
   * The error for a key of `bytes` (encoded) made by `where`.
   *
   * @param where What made the key: `limitCalls("export")`, `Job "credit"`, `kvLog`.
   * @param bytes The key's size, encoded as KV measures it.
   */
  constructor(
    /** What made the key. */
    readonly where: string,
    /** The key's size, encoded. */
    readonly bytes: number,
  ) {
    super(400, "An id in this request is too long.", { code: "too_long" });
    this.name = "KeyTooLongError";
  }
}

/**
 * Throws when `key` is past KV's limit: a {@link KeyTooLongError} when the parts from `from` to
 * `to` (what a request may have given) took it past, a `TypeError` naming `where()` when it is too
 * long without them.
 */
export function checkKey(
  where: () => string,
  key: Deno.KvKey,
  from: number,
  to = key.length,
): void {
  const bytes = keySize(key);
  if (bytes <= MAX_KEY_BYTES) return;
  const own = key.map((part, i) => i >= from && i < to ? "" : part);
  if (keySize(own) > MAX_KEY_BYTES) {
    throw new TypeError(
      `${where()}: its key is too long for KV (${bytes} bytes encoded, max ${MAX_KEY_BYTES}) ` +
        `however short what a request gives: name it shorter`,
    );
  }
  throw new KeyTooLongError(where(), bytes);
}

/** A key's name as an error shows it: quoted, its first 40 characters. */
export function nameOf(part: Deno.KvKeyPart): string {
  const text = typeof part === "string" ? part : String(part);
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
}
