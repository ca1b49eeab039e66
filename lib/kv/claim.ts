/**
 * @module
 * The one-time claim of a form's state (`actions/form_state.ts`) in KV, so that a state applies
 * once across `deno serve --parallel` workers, processes and Deno Deploy isolates, where a
 * process's own memory would let each of them apply it again.
 */
import type { Claim } from "../actions/form_state.ts";
import { retrying } from "./commit.ts";

export function claimInKv(kv: Deno.Kv): Claim {
  return (id, expires) =>
    retrying("form state claim", async (commit) => {
      const key = ["form_state", "claimed", id];
      const result = await commit(
        kv.atomic()
          .check({ key, versionstamp: null })
          .set(key, true, { expireIn: Math.max(1, expires - Date.now()) }),
      );
      if (result.ok) return true;
      // A failed check: claimed before. A locked file says nothing yet: try again.
      return "locked" in result ? undefined : false;
    });
}
