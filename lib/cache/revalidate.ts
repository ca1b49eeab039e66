/**
 * @module
 * `revalidateTag(tag)`: drops every stored page that declared `tag`, on every worker and instance.
 */
import { requestContext } from "../server/context.ts";
import { kvOf } from "../kv/access.ts";
import type { AnyContext } from "../server/scope.ts";
import type { JobContext } from "../kv/jobs/define.ts";
import { isTag } from "./policy.ts";
import { bumpTag } from "./tags.ts";

/**
 * Drops every page stored with `tag` in its route's `cache.tags`, on every worker and instance: the
 * next request for each renders it again. It adds one to the tag's version in Deno KV; this process
 * sees it at once, the other workers of `deno serve --parallel` at their next request (a
 * `BroadcastChannel` tells them), every other process and instance within
 * `PAGE_CACHE_TAG_CHECK_MS` (25 ms) - each plus one KV read (docs/caching.md - How fast a
 * revalidation reaches every process). Call it after the write that changes what the pages show.
 *
 * @param tag The tag, as routes declare it.
 * @param from In a handler, its `ctx` (or a middleware's `c`); in a background job, its context
 *   (`run`'s second argument: a job answers no request); a server action needs none.
 * @returns Once the new version is in KV.
 *
 * @example
 * ```ts
 * // routes/_prices/actions.ts
 * "use server";
 * import { requestContext, revalidateTag } from "shell";
 * import { kvOf } from "shell/data";
 *
 * export async function setPrice(cents: number): Promise<void> {
 *   await kvOf(requestContext()).set(["price"], cents);
 *   await revalidateTag("prices");
 * }
 * ```
 * @see docs/caching.md
 */
export async function revalidateTag(
  tag: string,
  from?: AnyContext | JobContext,
): Promise<void> {
  if (!isTag(tag)) {
    throw new TypeError(
      `revalidateTag: ${JSON.stringify(tag)} is not a tag (1\u2013128 printable ASCII characters)`,
    );
  }
  await bumpTag(from && isJob(from) ? from.kv : kvOf(from ?? requestContext()), tag);
}

/** A job's context: its `kv` is the app's store (a request's context has none of its own). */
function isJob(from: AnyContext | JobContext): from is JobContext {
  return "kv" in from && "signal" in from && !("req" in from);
}
