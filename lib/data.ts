/**
 * The app's data in Deno KV: `import { ... } from "shell/data"`. `kvOf()` reaches the app's store
 * from a request; `collection()` declares a product's entities - validated, indexed, listed with
 * cursors, updated with optimistic concurrency and state machines, every change live on pages
 * through `changeStream()`; `kvLog()` is an append-only log that every worker and instance agrees
 * on, with `append`, `newest`, `after` and a live `feedOf()` for event streams; `rateLimit()` and
 * `limitCalls()` limit calls exactly across workers; `parseForm()` checks a server action's form
 * with a schema; `assertFits()` refuses what KV cannot hold; `defineJobs()` (in `routes/_jobs.ts`)
 * runs work outside requests on KV's queue and `Deno.cron`.
 *
 * @example
 * ```ts
 * // routes/_notes/notes.ts
 * import { append, kvLog, newest } from "shell/data";
 *
 * export interface Note {
 *   id: number;
 *   text: string;
 * }
 *
 * const NOTES = kvLog<Note>(["notes"]);
 *
 * export const latestNotes = (kv: Deno.Kv) => newest(kv, NOTES, 10);
 * export const saveNote = (kv: Deno.Kv, text: string) => append(kv, NOTES, (id) => ({ id, text }));
 * ```
 * @see docs/data.md
 * @module
 */
export { kvOf } from "./kv/access.ts";
export { after, append, type KvLog, kvLog, type Logged, newest } from "./kv/log.ts";
export {
  type Feed,
  FeedGapError,
  feedOf,
  type FeedOptions,
  sinceOf,
  type SubscribeOptions,
} from "./kv/feed.ts";
export {
  type Collection,
  collection,
  type CollectionOptions,
  type IndexSpec,
  type ListedIndexes,
  type ListOptions,
  type LiveOptions,
  type Transitions,
  type UniqueIndexes,
  type ViewOptions,
} from "./kv/collection/collection.ts";
export type { Page } from "./kv/collection/read.ts";
export type { Collision, ReindexOptions, ReindexReport } from "./kv/collection/reindex.ts";
export type { CollectionSchema, InputOf, OutputOf, SchemaResult } from "./kv/collection/schema.ts";
export type {
  CommitAllOptions,
  CreateOptions,
  Patch,
  SkippablePatch,
  WriteOptions,
} from "./kv/collection/write.ts";
export { type AllResults, commitAll, type Results, type Write } from "./kv/collection/together.ts";
export { type Skip, skip } from "./kv/collection/skip.ts";
export { type ParsedForm, parseForm } from "./actions/input.ts";
export {
  ConflictError,
  TransitionError,
  ValidationError,
  type ValidationIssue,
} from "./kv/collection/errors.ts";
export { changeStream, type ChangeStreamOptions } from "./kv/collection/stream.ts";
export {
  type CallLimit,
  limitCalls,
  type LimitResult,
  rateLimit,
  type RateLimitOptions,
} from "./kv/rate_limit.ts";
export { assertFits, KvLimitError, MAX_KEY_BYTES, MAX_VALUE_BYTES } from "./kv/limits.ts";
export { KvBusyError } from "./kv/commit.ts";
export {
  type AnyJobs,
  defineJobs,
  type EnqueueOptions,
  type JobContext,
  type JobDefinition,
  type Jobs,
  type JobsOptions,
  type PayloadOf,
} from "./kv/jobs/define.ts";
export { SlotKeyError } from "./kv/jobs/slot_key.ts";
export { KeyTooLongError } from "./kv/key_too_long.ts";
export {
  type DeadJob,
  deadJobs,
  type DeadJobsOptions,
  dropDeadJob,
  retryDeadJob,
} from "./kv/jobs/dead.ts";
