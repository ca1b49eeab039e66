/**
 * @module
 * `keyName(key)`: a KV key as one string, distinct for distinct keys, for maps that keep something
 * per key in a process (a log's feed, a rate limit's turn).
 */

/** A name of `key` distinct for distinct keys (`1`, `"1"` and `1n` included). */
export function keyName(key: Deno.KvKey): string {
  return JSON.stringify(
    key.map((part) =>
      typeof part === "bigint"
        ? { bigint: String(part) }
        : part instanceof Uint8Array
        ? { bytes: [...part] }
        : part
    ),
  );
}
