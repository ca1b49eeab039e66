/**
 * @module
 * The push beside the tag check: `revalidateTag` names the tag it moved on a `BroadcastChannel`,
 * and every other isolate the channel reaches - the other workers of `deno serve --parallel`
 * (threads of one process; measured, docs/caching.md) and, on Deno Deploy, other isolates of the
 * region - reads that tag again at its next request rather than up to `PAGE_CACHE_TAG_CHECK_MS`
 * later. A hint only: it carries no version (an isolate on another store would take it for its
 * own), so the worst it can do is cost one read, and losing it costs only the wait for the check,
 * which stays the guarantee for every process and instance the channel does not reach. Nothing
 * here reads KV: an idle isolate stays idle. The channel is `unref`'d (`node:worker_threads`' own
 * has `unref`; the global one would keep a script alive).
 */
import { BroadcastChannel } from "node:worker_threads";

const NAME = "shell:page-cache-tags";
/** Longer than any tag (policy.ts): anything else on the channel is not ours. */
const MAX_TAG = 128;

type Listener = (tag: string) => void;

const listeners = new Set<Listener>();
let channel: BroadcastChannel | undefined;

/** The isolate's one channel, made on first use and kept for its life (it holds nothing alive). */
function opened(): BroadcastChannel {
  if (channel) return channel;
  channel = new BroadcastChannel(NAME);
  channel.unref();
  channel.onmessage = (event: unknown) => {
    const tag = (event as MessageEvent).data;
    if (typeof tag !== "string" || tag.length > MAX_TAG) return;
    for (const listener of listeners) listener(tag);
  };
  return channel;
}

/** Calls `listener` with each tag another isolate moved; the returned function stops it. */
export function onTagMoved(listener: Listener): () => void {
  opened();
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** Tells every other isolate on the channel that `tag` moved (this one knows already). */
export function announceTagMoved(tag: string): void {
  opened().postMessage(tag);
}
