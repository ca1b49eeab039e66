/**
 * @module
 * Cron schedules read as `Deno.cron` reads them, and the slots a firing enqueues: the latest the
 * schedule names, and those a late firing missed (bounded, the rest warned of).
 */
import { Cron } from "croner";
import { log } from "../../server/log.ts";
import { describe } from "../../errors/digest.ts";
import { REMEMBER_MS } from "./message.ts";

/**
 * A cron job's schedule, read as Deno.cron reads it (five fields, UTC): refused where it is
 * written, in `defineJobs`, naming the job - not when an app starts, with Deno's bare message.
 * Deno.cron's parser (Cloudflare's saffron) numbers the days of the week 1 (Sunday) to 7
 * (Saturday), Quartz's way, takes a step from a number (`5/15`), and has no nicknames
 * (`@daily`), no `?`, no day of the week past 7 and no space around the fields; croner is told
 * so, or it read `1` as Monday, refused `5/15`, and took schedules Deno.cron then refused at
 * start-up.
 */
export function scheduleOf(name: string, cron: string): Cron {
  try {
    const weekdays = cron.split(/\s+/)[4] ?? "";
    if (/[@?]|^\s|\s$|(?:^|\s)\//.test(cron) || /(?<![#/\d])(?:[89]|\d{2,})/.test(weekdays)) {
      throw new Error("Deno.cron takes no @nickname, ?, day of the week past 7, or outer space");
    }
    return new Cron(cron, {
      paused: true,
      timezone: "UTC",
      mode: "5-part",
      alternativeWeekdays: true,
      sloppyRanges: true,
    });
  } catch (error) {
    throw new TypeError(
      `Job "${name}": cron "${cron}" is no schedule (${describe(error).message})`,
    );
  }
}

/** How many slots a late firing catches up at most, the latest kept. */
const CATCH_UP = 10;
/**
 * How early a firing may come and still count as its slot: Deno's timer and `Date.now()` are two
 * clocks, and a firing read a moment before its time would count as the slot before (done already).
 */
export const EARLY_MS = 1_000;

/**
 * The slots a cron firing at `now` enqueues, oldest first: the latest time the schedule names at
 * or before `now` - however late the firing, it is that slot's, as the firings of other processes
 * on time were (a firing past the minute once counted as a new slot: two runs) - and, after one
 * this process enqueued (`last`), those it missed between them (none, or a slot's run was lost to
 * a firing that came after the next slot's time). At most `CATCH_UP`: a process stopped for a
 * while does not flood the queue; and none older than `REMEMBER_MS`, for which another process's
 * enqueue on time may be forgotten (its key expired): a process that stood still for days (a
 * suspended machine) ran such a slot again.
 */
export function dueSlots(schedule: Cron, now: number, last?: number, job?: string): number[] {
  // `previousRuns` takes times strictly before its reference, to the second.
  const reference = new Date(now + EARLY_MS + 1000);
  const runs = schedule.previousRuns(last === undefined ? 1 : CATCH_UP, reference)
    .map((date) => date.getTime())
    .filter((slot) => last === undefined || (slot > last && slot > now - REMEMBER_MS));
  if (last !== undefined) warnDropped(schedule, last, runs.at(-1) ?? now, job);
  return runs.reverse();
}

/**
 * How many dropped slots a warning counts at most: a per-minute job stopped for a year stays cheap.
 */
const COUNT_DROPPED = 10_000;

/**
 * One `warn` line when slots after `last` and before `kept` (the oldest enqueued) were missed and
 * are not caught up: ops learn that runs may be missing (another process may have run them).
 */
function warnDropped(schedule: Cron, last: number, kept: number, job?: string): void {
  const oldest = schedule.nextRun(new Date(last))?.getTime();
  if (oldest === undefined || oldest >= kept) return;
  let dropped = 1;
  for (let at = oldest; dropped < COUNT_DROPPED; dropped++) {
    at = schedule.nextRun(new Date(at))?.getTime() ?? kept;
    if (at >= kept) break;
  }
  const count = dropped < COUNT_DROPPED ? `${dropped}` : `${COUNT_DROPPED} or more`;
  log(
    "warn",
    `Cron job ${job}: ${count} missed slots are not caught up (at most ${CATCH_UP}, none older ` +
      `than ${REMEMBER_MS / 86_400_000} days), the oldest ${new Date(oldest).toISOString()}`,
    { job, dropped, oldest: new Date(oldest).toISOString() },
  );
}
