/**
 * @module
 * The refusal of a key a cron job's schedule keeps for its own slots (`cron:NAME:TIME`, the keys
 * `Deno.cron` enqueues it with): an expected error (400), since such a key is usually a client's
 * (a webhook's delivery id, an id from a form), so a request that passes one on is answered as
 * the client's mistake - no digest, no Sentry event - and a product can tell it apart.
 */
import { HttpError } from "../../shared/http_error.ts";

/**
 * A cron job enqueued with a key its schedule's slots use (`cron:NAME:` and a time): taken first,
 * it skipped that slot, and the slot ran the taker's payload. A 400 (code `"reserved_key"`)
 * uncaught in a request; `job` and `key` say which, for the developer, never in the message.
 *
 * @example
 * ```ts
 * import { defineJobs, SlotKeyError } from "shell/data";
 *
 * const jobs = defineJobs({ nightly: { cron: "0 3 * * *", run() {} } });
 * const kv = await Deno.openKv(":memory:");
 * try {
 *   await jobs.enqueue(kv, "nightly", undefined, { key: "cron:nightly:2026-11-29T03:00:00.000Z" });
 * } catch (error) {
 *   if (error instanceof SlotKeyError) console.log(error.status, error.job); // 400 nightly
 * }
 * ```
 * @see docs/data.md - Background jobs
 */
export class SlotKeyError extends HttpError {
  /**
   * The error for `key`, given to enqueue `job`.
   *
   * @param job The cron job's name.
   * @param key The key as given.
   */
  constructor(
    /** The cron job's name. */
    readonly job: string,
    /** The key as given. */
    readonly key: string,
  ) {
    super(400, "This id is reserved: use another.", { code: "reserved_key" });
    this.name = "SlotKeyError";
  }
}
