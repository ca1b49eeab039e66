/**
 * @module
 * Cron jobs' schedules: each process's `Deno.cron` enqueues a job's run keyed by its slot, so every
 * process fires and one run goes. A name is registered once a process, for every open app of it.
 */
import { log } from "../../server/log.ts";
import type { Jobs, SlotOptions } from "./define.ts";
import { SLOT, slotId } from "./message.ts";
import { dueSlots, scheduleOf } from "./schedule.ts";

/** A cron job of one app: its store, where each slot is enqueued. */
interface CronTarget {
  kv: Deno.Kv;
  jobs: Jobs;
  name: string;
}

/**
 * The process's crons, by name: Deno refuses a second `Deno.cron` of a name ("Cron with this name
 * already exists"), and a process may hold several apps of one manifest (tests), so each name is
 * registered once and enqueues for every open app; the last app closed ends it. `last`: the
 * latest slot it enqueued, from which a late firing catches up.
 */
const crons = new Map<
  string,
  { schedule: string; targets: Set<CronTarget>; end: AbortController; last?: number }
>();

const cronName = (job: string) => `job ${job}`;

/**
 * Has `Deno.cron` enqueue each cron job of `jobs` on `kv` until `closing` aborts. A job already
 * scheduled in this process on another schedule is refused before any is registered: a schedule
 * that lost ran silently on the other's.
 */
export function scheduleCrons(kv: Deno.Kv, jobs: Jobs, closing?: AbortSignal): void {
  const scheduled = Object.entries(jobs.definitions).flatMap(([name, { cron }]) =>
    cron ? [[name, cron] as const] : []
  );
  for (const [name, cron] of scheduled) {
    const other = crons.get(cronName(name))?.schedule;
    if (other !== undefined && other !== cron) {
      throw new TypeError(
        `Job "${name}": cron "${cron}", but an app open in this process runs it on "${other}" ` +
          "(Deno.cron takes a name once: one schedule a job name in a process)",
      );
    }
  }
  for (const [name, cron] of scheduled) scheduleJob({ kv, jobs, name }, cron, closing);
}

function scheduleJob(target: CronTarget, schedule: string, closing?: AbortSignal): void {
  if (typeof Deno.cron !== "function") {
    log(
      "warn",
      `Job "${target.name}" has a cron schedule but Deno.cron is off: ` +
        `add "cron" to deno.json's "unstable"`,
    );
    return;
  }
  const name = cronName(target.name);
  let cron = crons.get(name);
  if (!cron) {
    const pattern = scheduleOf(target.name, schedule);
    const started = {
      schedule,
      targets: new Set<CronTarget>(),
      end: new AbortController(),
      last: undefined as number | undefined,
    };
    Deno.cron(name, schedule, { signal: started.end.signal }, async () => {
      const slots = dueSlots(pattern, Date.now(), started.last, target.name);
      if (slots.length === 0) return;
      const enqueues = [...started.targets].flatMap((each) =>
        slots.map((slot) => enqueueSlot(each, slot))
      );
      await Promise.all(enqueues);
      // Once enqueued: an enqueue that failed throws, and Deno.cron's retry of this handler
      // enqueues the slots again (the key keeps those that went to one run).
      started.last = slots.at(-1);
    });
    crons.set(name, cron = started);
  }
  cron.targets.add(target);
  const running = cron;
  closing?.addEventListener("abort", () => {
    running.targets.delete(target);
    if (running.targets.size > 0) return;
    running.end.abort();
    crons.delete(name);
  }, { once: true });
}

/**
 * Enqueues a cron job's run for the slot (the scheduled time, ms since the epoch), keyed by it:
 * every process's `Deno.cron` fires, one enqueue wins (false for the others).
 */
export function enqueueSlot({ kv, jobs, name }: CronTarget, slot: number): Promise<boolean> {
  const options: SlotOptions = { key: slotId(name, slot), [SLOT]: true };
  return jobs.enqueue(kv, name, undefined, options);
}
