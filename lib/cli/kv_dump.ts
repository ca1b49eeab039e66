/**
 * @module
 * `deno task kv:dump [part ...]`: the app's KV entries, one JSON line each (`key`, `value`,
 * `versionstamp`), in key order - all of them, or those whose key starts with the parts given
 * (`deno task kv:dump guestbook items`; a part that is a number is taken as one). For reading what
 * the app stored, or diffing two stores; the store is the one the settings name (`KV_PATH`, as for
 * the server). What JSON has no form for is written tagged: `{"$bigint": "12"}`,
 * `{"$bytes": "<base64>"}`, `{"$u64": "7"}`; a Date is its ISO string.
 */
import { Buffer } from "node:buffer";
import { settingsOrExit } from "./settings.ts";
import { storeOrExit } from "./store.ts";

const prefix = Deno.args.map((part) => /^-?\d+(\.\d+)?$/.test(part) ? Number(part) : part);
const kv = await storeOrExit(settingsOrExit().kvPath);
for await (const entry of kv.list({ prefix })) {
  const { key, value, versionstamp } = entry;
  console.log(JSON.stringify({ key, value, versionstamp }, tagged));
}
kv.close();

function tagged(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return { $bigint: String(value) };
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString("base64") };
  if (value instanceof Deno.KvU64) return { $u64: String(value.value) };
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  return value;
}
