/**
 * @module
 * The push beside a miss's look-ups in KV (waiting.ts): the process that rendered a page no one
 * held names its key on a `BroadcastChannel` once it let go of the page's lease - the page written
 * to KV, or nothing to write - and a request waiting for it in another isolate the channel reaches
 * (the other workers of `deno serve --parallel`; on Deno Deploy, other isolates of the region)
 * looks in KV at once instead of at its next look. A hint only, as tag_push.ts is: a stray message
 * costs one read, a lost one the wait for the next look.
 */
import { hintChannel } from "./hint_channel.ts";

/** Its bound: longer than any page's key (key.ts); a longer message is not ours, nor sent. */
const channel = hintChannel("shell:page-cache-stored", 16 * 1024);

/** The requests of this isolate waiting for a page, by its key. */
const waiting = new Map<string, Set<() => void>>();
let listening = false;

/**
 * Calls `wake` when another isolate says it let go of `key`'s lease; the returned function stops
 * it.
 */
export function onStored(key: string, wake: () => void): () => void {
  if (!listening) {
    listening = true;
    channel.listen((key) => {
      for (const wake of waiting.get(key) ?? []) wake();
    });
  }
  let wakes = waiting.get(key);
  if (!wakes) waiting.set(key, wakes = new Set());
  wakes.add(wake);
  return () => {
    wakes.delete(wake);
    if (wakes.size === 0 && waiting.get(key) === wakes) waiting.delete(key);
  };
}

/** Tells the other isolates on the channel that this one let go of `key`'s lease. */
export function announceStored(key: string): void {
  channel.send(key);
}
