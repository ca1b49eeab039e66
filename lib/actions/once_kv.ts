/**
 * @module
 * Submissions claimed in KV (`actions/once.ts`), so that two posts of one form make one effect
 * across `deno serve --parallel` workers, processes on one file and Deno Deploy isolates, where a
 * process's own memory would let each run it. The claim is one atomic commit; the entry holds its
 * own end (`until`: the lease, then the outcome's hour), because `expireIn` drops an entry some
 * time after it expires, not at once. The claim's versionstamp is what `settle` checks: a key
 * another post took after the lease lapsed is left as that post made it; a key gone (dropped, or
 * released by that post's failure) takes this one's outcome.
 */
import { type Held, ONCE_TTL_MS, type Outcome, type Submissions } from "./once.ts";
import { retrying } from "../kv/commit.ts";

interface Entry {
  until: number;
  outcome?: Outcome;
}

export function submissionsInKv(kv: Deno.Kv): Submissions {
  const keyOf = (id: string) => ["_app", "once", id];
  const shown = (entry: Entry | null) =>
    !entry || entry.until < Date.now() ? "gone" as const : entry.outcome ?? "running" as const;
  return {
    claim: (id, lease) =>
      retrying<Held | "running" | Outcome>("submission claim", async (commit) => {
        const key = keyOf(id);
        const mine: Entry = { until: Date.now() + lease };
        const fresh = kv.atomic().check({ key, versionstamp: null });
        const result = await commit(fresh.set(key, mine, { expireIn: lease }));
        if (result.ok) return { held: result.versionstamp };
        if ("locked" in result) return undefined;
        // Taken: the first's, or one whose lease or hour ran out and KV has not dropped yet.
        const found = await kv.get<Entry>(key);
        const seen = shown(found.value);
        if (seen !== "gone") return seen;
        // Of two posts finding it lapsed, the check lets one take it; the other reads again.
        const again = await commit(kv.atomic().check(found).set(key, mine, { expireIn: lease }));
        return again.ok ? { held: again.versionstamp } : undefined;
      }),
    settle: (id, { held }, outcome) =>
      retrying("submission settle", async (commit) => {
        const key = keyOf(id);
        const entry: Entry = { until: Date.now() + ONCE_TTL_MS, outcome };
        const settled = (check: Deno.AtomicCheck) => {
          const ours = kv.atomic().check(check);
          return commit(
            outcome ? ours.set(key, entry, { expireIn: ONCE_TTL_MS }) : ours.delete(key),
          );
        };
        const result = await settled({ key, versionstamp: held });
        if (result.ok) return true;
        if ("locked" in result) return undefined;
        // Not our claim any more. Gone (its lease's `expireIn` dropped it, or a repeat that took it
        // failed and released it): no other effect is kept, so this one's is - else a later repeat
        // would run a second. Another's (running or settled): left as it is.
        const found = await kv.get<Entry>(key);
        if (found.versionstamp !== null) return false;
        return (await settled(found)).ok || undefined;
      }),
    async read(id) {
      return shown((await kv.get<Entry>(keyOf(id))).value);
    },
  };
}
