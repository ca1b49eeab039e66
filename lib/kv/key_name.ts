/**
 * @module
 * `keyName(key)`: a KV key as one string, distinct for distinct keys, for maps that keep something
 * per key in a process (a log's feed, a rate limit's turn).
 */

/**
 * A name of `key` distinct for distinct keys (`1`, `"1"` and `1n` included; `0` and `-0`, `NaN`,
 * `Infinity` and `-Infinity` too, which KV keeps apart and JSON does not: `-0` is `0` to it, and
 * the others `null`, so a client's `Number("-0")` in a log's key was another log's feed).
 */
export function keyName(key: Deno.KvKey): string {
  return JSON.stringify(
    key.map((part) =>
      typeof part === "bigint"
        ? { bigint: String(part) }
        : part instanceof Uint8Array
        ? { bytes: [...part] }
        : typeof part === "number" && (!Number.isFinite(part) || Object.is(part, -0))
        ? { number: Object.is(part, -0) ? "-0" : String(part) }
        : part
    ),
  );
}
