/**
 * @module
 * A secret kept in the app's KV store: made once, at random, by whichever process asks first, and
 * the same ever after for every worker, instance and deploy sharing the store - which a key made by
 * each build or process is not. It signs what one deploy hands the next: the form-state cookie set
 * just before a deploy is read just after it, by the new one. Nothing to set up; to change it,
 * delete the key (`["_app", "secret", name]`): cookies signed with the old one then no longer
 * apply.
 */
import { randomBytes } from "node:crypto";
import { retrying } from "./commit.ts";

/**
 * The secret `name` of `kv`, read once per process (a read that fails is tried again next time).
 */
export function kvSecret(kv: Deno.Kv, name: string): () => Promise<string> {
  const key = ["_app", "secret", name];
  let secret: Promise<string> | undefined;
  const load = () =>
    retrying(`the ${name} secret`, async (commit) => {
      const found = await kv.get<string>(key);
      if (typeof found.value === "string") return found.value;
      const made = randomBytes(32).toString("base64url");
      const result = await commit(kv.atomic().check(found).set(key, made));
      // Lost the race to another process: read the one it made.
      return result.ok ? made : undefined;
    });
  return () =>
    secret ??= load().catch((error) => {
      secret = undefined;
      throw error;
    });
}
