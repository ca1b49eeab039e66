/**
 * @module
 * A delivery of a job's message, in its slot: skipped once the job is done or the try failed (its
 * outcome on record), waiting on its run delivered before (the lease; its slot given back
 * meanwhile), a cron slot skipped while another goes on; else one try, in its span.
 */
import { log, loggedHeader } from "../../server/log.ts";
import type { Jobs } from "./define.ts";
import { leaseOf } from "./lease.ts";
import {
  cronKey,
  doneKey,
  isSlotId,
  type JobMessage,
  REMEMBER_MS,
  triedKey,
  tryKey,
} from "./message.ts";
import type { Slot } from "./slots.ts";
import { type JobTry, tryOnce, type TryOptions } from "./try.ts";

/** What the app running the jobs gives them. */
export interface ListenOptions extends TryOptions {
  /**
   * Aborts as the app closes: its cron schedules end, and a delivery still waiting for a slot is
   * given back to KV.
   */
  closing?: AbortSignal;
}

/** An app's jobs and what it gives them: what a delivery runs under. */
export interface Runner extends ListenOptions {
  jobs: Jobs;
}

/**
 * Runs a delivery of `message` for `app`; resolves with its try once all of it is written, the
 * lease given back included (a test that fires the next slot then sees it run, not skipped), or
 * with nothing when no try ran (done before, waited out, a cron slot skipped). Its `slot` is given
 * back while it waits on a run delivered before, and taken again to run a try it took over.
 */
export async function run(
  kv: Deno.Kv,
  app: Runner,
  message: JobMessage,
  slot: Slot,
): Promise<JobTry | undefined> {
  const { job: name, id, attempt = 0, keyed, trace } = message;
  const done = doneKey(name, id);
  const definition = Object.hasOwn(app.jobs.definitions, name)
    ? app.jobs.definitions[name]
    : undefined;
  const cronRun = definition?.cron !== undefined && isSlotId(name, id);
  // A cron job's lease is the job's (one slot runs at a time); any other's, its try's.
  const key = cronRun ? cronKey(name) : tryKey(name, id, attempt);
  // A delivery again of a try whose outcome is on record (done, or failed with its retry or dead
  // letter committed) whose process died before KV's queue heard it ended: nothing to run. Read
  // with the lease in one snapshot: an outcome committed between two reads (the lease given back
  // with it) would look like a try never run.
  const [isDone, isTried, held] = await kv.getMany([done, triedKey(name, id, attempt), key]);
  if (isDone.versionstamp !== null || isTried.versionstamp !== null) return undefined;
  const job = `${cronRun ? "Cron job" : "Job"} ${name}`;
  const logged = { job: name, job_id: loggedHeader(id), attempt };
  // KV sends a message again about a minute into a run that goes on (its local store). Its wait
  // holds no slot: ten of them held every slot of the process, and no other job ran meanwhile.
  const waiting = () => {
    log("info", `${job}: delivered again while its run goes on, waiting`, logged);
    slot.release();
  };
  // Its lease taken over by a delivery again elsewhere while this run went on: both run.
  const lost = () =>
    log(
      "error",
      `${job}: its lease lapsed while its run went on, and another delivery took it over: it may ` +
        "run twice (a run that blocks its event loop for 15 s renews nothing: await in long work)",
      logged,
    );
  const turn = await leaseOf(kv, held, id, { closing: app.closing, waiting, lost });
  if (turn === "ended") {
    // That run kept its lease and has ended, its outcome (done, or tried again) on record.
    log("info", `${job}: the run it waited on has ended, its outcome kept`, logged);
    return undefined;
  }
  if (turn === "held") {
    // Whether the run holding the turn is the slot before (a job slower than its schedule) or one
    // of the slots a late firing caught up with it: no try, so no span; marked done, so a delivery
    // again never runs it - one run per slot at most, and the skip on record.
    log("warn", `Cron job ${name}: a slot was skipped, another run of it is still going`, {
      job: name,
      job_id: id,
    });
    await kv.set(done, true, { expireIn: REMEMBER_MS });
    return undefined;
  }
  let tried: JobTry | undefined;
  try {
    await slot.retake(); // the run it waited on lapsed: this one runs, in a slot again
    const telemetry = app.telemetry;
    const once = async () => void (tried = await tryOnce(kv, app, message, definition, done, turn));
    if (!telemetry?.job) await once();
    else {
      const run = { name, attempt, key: keyed ? loggedHeader(id) : undefined, carried: trace };
      await telemetry.job(run, once);
    }
  } finally {
    await turn.end();
  }
  return tried;
}
