/**
 * @module
 * The shared half of `errors/repeats.ts` in KV: which event was sent for a failure's digest, so
 * that every `deno serve --parallel` worker, process on one file and Deno Deploy isolate sends one
 * a window between them, not one each. The entry holds the sending (when, its event id); a process
 * whose window for the digest has passed reads it and, when it is older than the window, writes
 * its own with a `check` on what it read: of processes racing, one commits and sends, the others
 * read again and find its event to name. The time is in the value because KV's `expireIn` drops
 * an entry some time after it expires, not at once; `expireIn` only clears what no failure asks
 * for again.
 */
import type { Sent, SharedRepeats } from "./repeats.ts";
import { retrying } from "../kv/commit.ts";

/** Reads and commits before the process's own window decides: racers settle in one or two. */
const ATTEMPTS = 3;

export function repeatsInKv(kv: Deno.Kv): SharedRepeats {
  return async (digest, mine, ms) => {
    const key = ["failure_sent", digest];
    const theirs = await retrying(
      "failure repeats",
      async (commit) => {
        const entry = await kv.get<Sent>(key);
        if (entry.value && mine.at - entry.value.at < ms) return entry.value;
        const result = await commit(kv.atomic().check(entry).set(key, mine, { expireIn: ms }));
        return result.ok ? null : undefined;
      },
      ATTEMPTS,
      0,
    );
    return theirs ?? undefined;
  };
}
