/**
 * @module
 * A run's lease in KV (a try's, or a cron job's turn): taken as the run starts, renewed while it
 * goes on, given back with its outcome; a delivery again of the same run waits on it.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { commit } from "../commit.ts";

/**
 * How long a lease outlives its run's last renewal: a run renews it every `BEAT_MS`, so only a
 * run whose process died (or whose event loop a job blocked that long) lets it lapse.
 */
const LEASE_MS = 15_000;
const BEAT_MS = 5_000;

/** A lease in KV: which job id's run holds it, and until when unless renewed. */
interface LeaseRecord {
  until: number;
  id: string;
}

/** A lease taken: renewed while the run goes on, given back by `end`. */
export interface Lease {
  /**
   * Gives the lease back (once; later calls do nothing), in the commit of the try's `outcome`
   * (its done mark, its retry or dead letter): one commit, not two. A lease taken over meanwhile
   * (a lapse) is left to its taker, and the outcome committed alone.
   */
  end(outcome?: (atomic: Deno.AtomicOperation) => Deno.AtomicOperation): Promise<void>;
}

/** What the holder of a lease is told, and when its wait ends. */
export interface LeaseEvents {
  /** Aborts the wait on a run delivered before (the app closes): the message is left to KV. */
  closing?: AbortSignal;
  /** A run of this very message holds the lease: this delivery waits on it (told once). */
  waiting(): void;
  /**
   * The lease lapsed while this run held it and was taken over (told once): the run goes on here
   * and there. Only a run whose event loop was blocked for `LEASE_MS` (renewing nothing) loses it.
   */
  lost(): void;
}

/**
 * A run's lease, on any process. KV delivers a message again both once its process died mid-run
 * and, on its local store, about a minute into a run alive (its keepalive misses it; 62 s measured
 * on Deno 2.9.6): a job longer than that ran twice at once. The lease is held while the run goes
 * on, renewed every `BEAT_MS`, and lapses `LEASE_MS` after a process died: a delivery finding it
 * held by its own id waits as long as it is renewed, and takes it once nobody renewed it for
 * `LEASE_MS` (that run's process died), or answers `"ended"` once it was given back (that run's
 * outcome committed with it); `"held"` while another id's run holds it (a cron job's other slot:
 * `Deno.cron` skips a run while the one before goes on, and enqueuing each slot lost that).
 * `read`: the lease's entry as the delivery read it, in one snapshot with its outcome's marks.
 */
export async function leaseOf(
  kv: Deno.Kv,
  read: Deno.KvEntryMaybe<unknown>,
  id: string,
  { closing, waiting, lost }: LeaseEvents,
): Promise<Lease | "held" | "ended"> {
  const key = read.key;
  // Kept past its lease, so that a delivery waiting on it below still finds it unchanged.
  const take = (was: { key: Deno.KvKey; versionstamp: string | null }) => {
    const value: LeaseRecord = { until: Date.now() + LEASE_MS, id };
    return kv.atomic().check(was).set(key, value, { expireIn: 4 * LEASE_MS });
  };
  let held = read as Deno.KvEntryMaybe<LeaseRecord>;
  let taken: Deno.KvCommitResult | Deno.KvCommitError = { ok: false };
  let waited = false;
  while (!taken.ok) {
    if (held.value && held.value.until > Date.now()) {
      if (held.value.id !== id) return "held";
      // A run of this very message goes on: waited on, not let go - acknowledged now, nothing
      // would deliver it again should that run's process die before its outcome. Looked at
      // every beat; the app's close rejects the wait, leaving the message to KV.
      if (!waited) waiting();
      waited = true;
      const wait = Math.min(BEAT_MS, held.value.until - Date.now() + 1);
      await sleep(wait, undefined, { signal: closing });
      held = await kv.get<LeaseRecord>(key);
      if (held.versionstamp === null) return "ended"; // given back in the commit of its outcome
      continue; // renewed: wait on; not renewed by its end, taken below
    }
    taken = await take(held).commit();
    if (!taken.ok) held = await kv.get<LeaseRecord>(key);
  }
  let versionstamp = taken.versionstamp;
  let told = false;
  const tellLost = () => {
    if (!told) lost();
    told = true;
  };
  let renewing = Promise.resolve();
  const beat = setInterval(() => {
    renewing = renewing.then(async () => {
      const renewed = await commit(take({ key, versionstamp })).catch(() => undefined);
      if (renewed?.ok) versionstamp = renewed.versionstamp;
      // Another handle's write lock on the file (a --parallel worker's, another process's) is one
      // beat missed, the next well within the lease; a lost check (taken over after a lapse) or
      // the store closed ends the renewals.
      else if (!renewed || !("locked" in renewed)) {
        clearInterval(beat);
        if (renewed) tellLost();
      }
    });
  }, BEAT_MS);
  let ended = false;
  return {
    async end(outcome?: (atomic: Deno.AtomicOperation) => Deno.AtomicOperation) {
      if (ended) return;
      ended = true;
      clearInterval(beat);
      await renewing;
      const given = kv.atomic().check({ key, versionstamp }).delete(key);
      if ((await (outcome?.(given) ?? given).commit()).ok) return;
      tellLost();
      await outcome?.(kv.atomic()).commit(); // the taker keeps its lease; the outcome is this try's
    },
  };
}
