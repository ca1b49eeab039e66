/**
 * @module
 * The push beside the tag check: `revalidateTag` names the tag it moved on a `BroadcastChannel`,
 * and every other isolate the channel reaches - the other workers of `deno serve --parallel`
 * (threads of one process; measured, docs/caching.md) and, on Deno Deploy, other isolates of the
 * region - reads that tag again at its next request rather than up to `PAGE_CACHE_TAG_CHECK_MS`
 * later. A hint only: it carries no version (an isolate on another store would take it for its
 * own), so the worst it can do is cost one read, and losing it costs only the wait for the check,
 * which stays the guarantee for every process and instance the channel does not reach. Nothing
 * here reads KV: an idle isolate stays idle.
 */
import { hintChannel } from "./hint_channel.ts";

/** Its bound: a tag is at most 128 characters (policy.ts); anything longer is not ours. */
const channel = hintChannel("shell:page-cache-tags", 128);

/** Calls `listener` with each tag another isolate moved; the returned function stops it. */
export function onTagMoved(listener: (tag: string) => void): () => void {
  return channel.listen(listener);
}

/** Tells every other isolate on the channel that `tag` moved (this one knows already). */
export function announceTagMoved(tag: string): void {
  channel.send(tag);
}
