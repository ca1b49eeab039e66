/**
 * @module
 * Submissions claimed in KV (`actions/once.ts`), so that two posts of one form make one effect
 * across `deno serve --parallel` workers, processes on one file and Deno Deploy isolates, where a
 * process's own memory would let each run it. The claim is one atomic commit; the entry holds its
 * own end (`until`), because `expireIn` drops an entry some time after it expires, not at once.
 */
import { ONCE_TTL_MS, type Outcome, type Submissions } from "../actions/once.ts";
import { retrying } from "./commit.ts";

interface Entry {
  until: number;
  outcome?: Outcome;
}

export function submissionsInKv(kv: Deno.Kv): Submissions {
  const keyOf = (id: string) => ["_app", "once", id];
  const shown = (entry: Entry | null) =>
    !entry || entry.until < Date.now() ? "gone" as const : entry.outcome ?? "running" as const;
  return {
    claim: (id) =>
      retrying("submission claim", async (commit) => {
        const key = keyOf(id);
        const mine: Entry = { until: Date.now() + ONCE_TTL_MS };
        const fresh = kv.atomic().check({ key, versionstamp: null });
        const result = await commit(fresh.set(key, mine, { expireIn: ONCE_TTL_MS }));
        if (result.ok) return "ours";
        if ("locked" in result) return undefined;
        // Taken: the first's, or one whose time ran out and KV has not dropped yet.
        const found = await kv.get<Entry>(key);
        const seen = shown(found.value);
        if (seen !== "gone") return seen;
        const again = await commit(
          kv.atomic().check(found).set(key, mine, { expireIn: ONCE_TTL_MS }),
        );
        return again.ok ? "ours" : undefined;
      }),
    async settle(id, outcome) {
      const key = keyOf(id);
      if (!outcome) return await kv.delete(key);
      const entry: Entry = { until: Date.now() + ONCE_TTL_MS, outcome };
      await kv.set(key, entry, { expireIn: ONCE_TTL_MS });
    },
    async read(id) {
      return shown((await kv.get<Entry>(keyOf(id))).value);
    },
  };
}
