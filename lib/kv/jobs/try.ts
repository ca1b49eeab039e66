/**
 * @module
 * One try of a job: its `run` within its timeout, then its outcome committed with its lease given
 * back - done, enqueued again on its `retries`, or kept as dead - a failure logged and reported.
 */
import { log, loggedHeader } from "../../server/log.ts";
import { NO_LINKS, type Telemetry } from "../../server/telemetry.ts";
import { describe, digestOf } from "../../errors/digest.ts";
import { type ProductSettings, withJobSettings } from "../../settings/declare.ts";
import { deadLetter } from "./dead.ts";
import { type JobDefinition, TIMEOUT_MS } from "./define.ts";
import type { Lease } from "./lease.ts";
import { deadKey, type JobMessage, keyKey, REMEMBER_MS, triedKey } from "./message.ts";

/** The tries after the first, in milliseconds from the failure before: about 20 minutes in all. */
const RETRIES = [1_000, 10_000, 60_000, 300_000, 900_000];

/**
 * A try of a job that ended, as the app's listener ran it (the test kit's `watchJobs`).
 *
 * @example
 * ```ts
 * import type { JobTry } from "shell/testing";
 *
 * const failed = (tried: JobTry) => tried.digest !== undefined;
 * ```
 * @see docs/testing.md - Background jobs
 */
export interface JobTry<P = unknown> {
  /** The job's name. */
  job: string;
  /** Its id: its key, else a random one. */
  id: string;
  /** What it was enqueued with (typed by the job's `run` where the test kit knows the job). */
  payload: P;
  /** Tries before this one. */
  attempt: number;
  /** The failure's digest, if this try failed (tried again, or kept as dead). */
  digest?: string;
}

/** What the app running a job gives its tries. */
export interface TryOptions {
  /** Where failures are reported. */
  telemetry?: Telemetry;
  /** The app's own settings, which its jobs read as `settings(job)`. */
  settings?: ProductSettings;
  /** Every job's retries in place of its own (`AppOptions.jobRetries`: a test's). */
  retries?: number[];
}

/**
 * A try of the job: done, or failed (logged, reported) and enqueued again or kept as dead; returns
 * the try for the watchers.
 */
export async function tryOnce(
  kv: Deno.Kv,
  app: TryOptions,
  message: JobMessage,
  definition: JobDefinition<unknown> | undefined,
  done: Deno.KvKey,
  lease: Lease,
): Promise<JobTry> {
  const { job: name, id, payload, attempt = 0 } = message;
  try {
    if (!definition) throw new Error(`No job named "${name}" in routes/_jobs.ts`);
    await withinTimeout(
      definition,
      (signal) => definition.run(payload, withJobSettings({ kv, name, id, signal }, app.settings)),
    );
  } catch (error) {
    // Tried again by us, not by KV's own retry (a rethrow): Deno prints every rethrown error
    // to stderr, and the dead letter KV writes past its retries wakes no `kv.watch`.
    const delay = (app.retries ?? definition?.retries ?? RETRIES)[attempt];
    const digest = failed(error, name, id, attempt, delay, app.telemetry);
    await lease.end((atomic) => failedOutcome(atomic, message, delay, digest));
    return { job: name, id, payload, attempt, digest };
  }
  // A dead letter of this job now is KV's own, stale: its local store counts each minute of a run
  // alive as a failed delivery (its keepalive never extends a running message's deadline) and,
  // past its 5 redeliveries (7 minutes into the run), writes one while the run goes on.
  await lease.end((atomic) =>
    atomic.set(done, true, { expireIn: REMEMBER_MS }).delete(deadKey(name, id))
  );
  return { job: name, id, payload, attempt };
}

/**
 * A failed try's outcome, in one commit: its retry in `delay` (or, with none left, its dead
 * letter); its mark, which a delivery again of this try finds (a process that died before KV's
 * queue heard the try ended sent it again, and it enqueued a second retry: two chains from then
 * on); and its key remembered a week past the retry's time (a key enqueued a week before, still
 * retrying, was taken again meanwhile).
 */
function failedOutcome(
  atomic: Deno.AtomicOperation,
  message: JobMessage,
  delay: number | undefined,
  digest: string,
): Deno.AtomicOperation {
  const { job: name, id, attempt = 0, keyed } = message;
  atomic.set(triedKey(name, id, attempt), true, { expireIn: REMEMBER_MS });
  if (keyed) atomic.set(keyKey(name, id), true, { expireIn: REMEMBER_MS + (delay ?? 0) });
  if (delay === undefined) {
    return atomic.set(deadKey(name, id), deadLetter(message, digest), { expireIn: REMEMBER_MS });
  }
  const next: JobMessage = { ...message, attempt: attempt + 1 };
  return atomic.enqueue(next, { delay, keysIfUndelivered: [deadKey(name, id)] })
    .delete(deadKey(name, id)); // KV's own, stale (as a done try's, above)
}

/** Settles like the try, or fails once its `timeout` passed, aborting the signal it was given. */
async function withinTimeout(
  { timeout = TIMEOUT_MS }: JobDefinition<unknown>,
  work: (signal: AbortSignal) => Promise<void> | void,
): Promise<void> {
  const deadline = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`The job did not finish within ${timeout} ms (its timeout)`);
      error.name = "DeadlineExceeded";
      deadline.abort(error);
      reject(error);
    }, timeout);
  });
  try {
    await Promise.race([work(deadline.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function failed(
  error: unknown,
  name: string,
  id: string,
  attempt: number,
  retryIn: number | undefined,
  telemetry?: Telemetry,
): string {
  const digest = digestOf(error);
  const described = describe(error);
  const links = telemetry?.captureFailure(error, digest, undefined, { job: name }) ?? NO_LINKS;
  log("error", `Job ${name} failed: ${described.name}: ${described.message}`.split("\n")[0], {
    digest,
    job: name,
    job_id: loggedHeader(id), // a client's key, maybe: clipped as a header is
    attempt,
    // What comes next, for whoever reads the line: another try, or none (a dead job to look at).
    ...(retryIn === undefined ? { dead: true } : { retry_in_ms: retryIn }),
    ...links,
    error: described,
  });
  return digest;
}
