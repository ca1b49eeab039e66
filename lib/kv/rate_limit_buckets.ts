/**
 * @module
 * A rate limit past what one KV value of call times holds (7,000 calls): its window counted in
 * buckets, each a KV key holding how many calls its slice of time (a sixtieth of the window)
 * counted. A call reads the buckets its window touches (one list) and counts itself in the current
 * one, with a `check` on every bucket read: of two racing calls one commits and the other reads
 * again, so it is exact across workers, processes and Deploy isolates - at a bucket's
 * granularity. The oldest bucket counts whole, so a call counts against the calls of up to one
 * bucket more than `windowMs`: never more than `limit` get through in any `windowMs`, and a call
 * the exact log would have let in may be refused up to a bucket's width early.
 */
import type { Commit } from "./commit.ts";

/** What a call came to: `limitCalls`' `LimitResult`. */
type Counted = { ok: true; remaining: number } | { ok: false; retryAfterSeconds: number };

/** How many slices a window is counted in. */
const SLICES = 60;
/** The most checks KV takes in one commit. */
const MAX_CHECKS = 100;

/** A bucket's width, and how many buckets a call counts (the current one included). */
export function bucketsOf(windowMs: number): { width: number; span: number } {
  const width = Math.max(1, Math.ceil(windowMs / SLICES));
  return { width, span: Math.ceil(windowMs / width) + 1 };
}

/**
 * Counts a call at `t` under `kvKey` if the buckets of its window hold fewer than `limit` calls;
 * `undefined` when its commit lost a race (read again).
 */
export async function countInBuckets(
  kv: Deno.Kv,
  kvKey: Deno.KvKey,
  limit: number,
  windowMs: number,
  t: number,
  commit: Commit,
): Promise<Counted | undefined> {
  const { width, span } = bucketsOf(windowMs);
  const current = Math.floor(t / width);
  const first = current - span + 1;
  const prefix = [...kvKey, "buckets"];
  const read = new Map<number, Deno.KvEntry<number>>();
  // Buckets ahead of this clock too (another worker's runs ahead, or this one stepped back): they
  // count as now, as the log's times ahead do. Unread, their calls got through twice over.
  for await (const entry of kv.list<number>({ prefix, start: [...prefix, first] })) {
    read.set(entry.key.at(-1) as number, entry);
  }
  let counted = 0;
  for (const { value } of read.values()) counted += value;
  if (counted >= limit) {
    // A slot frees when enough of the oldest buckets (listed first) have left the span: bucket
    // `b` leaves it when the current one is `b + span`.
    let left = counted;
    let leaving = first;
    for (const [bucket, { value }] of read) {
      leaving = bucket;
      if ((left -= value) < limit) break;
    }
    // Yet no bucket outlives its key: KV drops it a span after it was last written, by a clock now
    // at most. A bucket far ahead (a clock that leapt, or a window made longer: the old buckets'
    // numbers are of the shorter width) would otherwise say years.
    const freeIn = Math.min((leaving + span) * width - t, span * width);
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(freeIn / 1000)) };
  }
  const op = kv.atomic();
  for (let bucket = first; bucket <= current; bucket++) {
    op.check({ key: [...prefix, bucket], versionstamp: read.get(bucket)?.versionstamp ?? null });
  }
  // And the buckets ahead read, as many as KV's 100 checks a commit leave room for.
  const ahead = [...read.values()].filter(({ key }) => (key.at(-1) as number) > current);
  for (const entry of ahead.slice(0, MAX_CHECKS - span)) op.check(entry);
  const mine = read.get(current)?.value ?? 0;
  op.set([...prefix, current], mine + 1, { expireIn: span * width });
  const result = await commit(op);
  return result.ok ? { ok: true, remaining: limit - counted - 1 } : undefined;
}
