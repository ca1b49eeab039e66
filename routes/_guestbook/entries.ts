/**
 * @module
 * The guestbook's entries in Deno KV: a log (`lib/kv/log.ts`) under `["guestbook"]` — entries at
 * `["guestbook", "items", id]`, the newest id at `["guestbook", "latest"]` — so every worker and
 * instance reads the same entries in the same order, the newest are one range query, and the live
 * feed watches one key.
 */
import { append, type Feed, feedOf, kvLog, newest } from "shell/data";
import type { Entry } from "./types.ts";

export const GUESTBOOK = kvLog<Entry>(["guestbook"]);

/** The newest `count` entries, newest first. */
export function latestEntries(kv: Deno.Kv, count: number): Promise<Entry[]> {
  return newest(kv, GUESTBOOK, count);
}

/** Stores a signing (already validated) as the next entry. */
export function addEntry(kv: Deno.Kv, signing: { name: string; message: string }): Promise<Entry> {
  return append(kv, GUESTBOOK, (id) => ({ id, ...signing, at: new Date() }));
}

/** New entries as they are signed, on any worker or instance: one watch per worker. */
export function entryFeed(kv: Deno.Kv): Feed<Entry> {
  return feedOf(kv, GUESTBOOK);
}
