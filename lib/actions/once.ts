/**
 * @module
 * A submission's effect happens once. A form the server renders carries a submission key (a hidden
 * field, new at each render), and the browser stub sends one with each call that carries a form
 * (the same key for its retries of that call). The endpoint claims the key - with the action and
 * what was sent, so a key seen again with other content (a page from the shared cache, a form
 * changed after Back) is another submission - in KV, atomically: of two posts of one submission,
 * on any worker or isolate, one runs the action; the other waits (bounded) for the first's outcome
 * and answers with it (the same 303 and form state, the same result), or, when that outcome is too
 * large to keep or still not there, refuses with `already_sent` (409). The claim is a lease: it
 * holds while the first can still be running (`leaseMs`), so that a first whose process died
 * blocks its repeats for that long, not for the hour; the outcome is kept for the hour. `settle`
 * acts only on its own claim: a first slower than its lease, whose repeat took the key and ran,
 * neither overwrites nor releases that repeat's; a key gone meanwhile (dropped, or released by a
 * repeat that failed) takes the first's outcome, the one effect there is. An action that throws
 * (a refusal, a failure) releases the key: sending again runs it again. An action marked
 * `once = false` (`runsPerPost`) has none of this. Nothing here runs for a page's GET, nor for a
 * call without a key (reads).
 */
import { createHash } from "node:crypto";
import { httpError } from "../shared/http_error.ts";
import { ONCE_FIELD } from "../shared/action_wire.ts";
import type { Deadline } from "../server/deadline.ts";
import type { ActionFunction } from "../server/manifest.ts";

/** What a submission answered, kept for its repeats. */
export type Outcome =
  /** A form posted without JavaScript: a 303 to `to`, with the form's state for `page`. */
  | { to: string; page?: string; state?: string }
  /** A call from the stub: its result as devalue, or where it redirected. */
  | { result: string }
  | { redirect: string }
  /** An outcome too large to keep: its repeats are refused. */
  | { kept: false };

/** A claim this post holds: `settle` names it, and acts only while no other post holds the key. */
export interface Held {
  /** The claim's version (KV's versionstamp; a serial in memory). */
  held: string;
}

/**
 * Where submissions are claimed: `claim` answers `Held` for the first (or for a post after the
 * first's lease lapsed with no outcome), the first's outcome for a repeat, `"running"` while the
 * first holds it with none yet; `settle` keeps an outcome or, with none, releases the key - only
 * while the claim is still its own or the key is gone, answering whether it was; `read` answers
 * as `claim` does, `"gone"` once the key was released or its lease lapsed.
 */
export interface Submissions {
  claim(id: string, leaseMs: number): Promise<Held | "running" | Outcome>;
  settle(id: string, claim: Held, outcome: Outcome | undefined): Promise<boolean>;
  read(id: string): Promise<"gone" | "running" | Outcome>;
}

/** How long a submission's outcome is remembered: a repeat later than this runs again. */
export const ONCE_TTL_MS = 60 * 60 * 1000;

/**
 * How long a first's claim holds without an outcome: the time its request has left before its
 * deadline, and as long again - nothing stops an action at its deadline (the request is answered,
 * the action's promise goes on), so it gets that long to end, as a page's stream gets as long again
 * after its shell; the margin is also far more than clocks of two isolates differ. Past it, the
 * first is taken for dead (its process ended) and a repeat runs. With no deadline
 * (`REQUEST_TIMEOUT_MS=0`) an action may run for ever: the claim holds for the hour.
 */
export function leaseMs(deadline: Pick<Deadline, "expiresAt" | "ms"> | undefined): number {
  if (!deadline) return ONCE_TTL_MS;
  return Math.ceil(Math.max(0, deadline.expiresAt - performance.now())) + deadline.ms;
}

/**
 * Whether `action` opted out (`action.once = false`): idempotent by nature (a read, a set-to-value)
 * or meant to run at every post, it neither claims nor settles - no KV write for its submissions.
 */
export function runsPerPost(action: ActionFunction): boolean {
  return (action as { once?: unknown }).once === false;
}

/** Largest outcome kept, in characters (a form's state is at most 3,800 of its cookie anyway). */
export const MAX_OUTCOME = 8_000;
/**
 * How long a repeat waits for the first's outcome, and how often it looks: soon (a double click's
 * first is usually quick), then twice as long each time up to half a second, so that many repeats
 * of a slow first (200 at once: 20,000 KV reads in 5 s at a steady 50 ms) cost a few reads each.
 */
const WAIT_MS = 5_000;
const LOOK_MS = 50;
const MOST_LOOK_MS = 500;

/**
 * A key as the server's render (a UUID) and the stub (128 random bits, base64url) make them:
 * anything else is refused.
 */
const KEY = /^[A-Za-z0-9_-]{16,64}$/;

export function isSubmissionKey(value: unknown): value is string {
  return typeof value === "string" && KEY.test(value);
}

/**
 * The claim's id for `key` sent with `body` by `asker` (the endpoint adds the action's id): a
 * digest of them, so its size is fixed whatever the client sent. Files count by name, type and
 * bytes: another file of the same name and size, picked after Back, is another submission. (The
 * body is bounded and already read; its files are hashed as they are held, not copied.) `asker`
 * is who sends it (`read_call.ts`): the same key and content from another user - a form left on a
 * shared computer's page, a key that leaked - is their own submission, never answered with the
 * first user's outcome (their data, their form's state).
 */
export async function submissionId(key: string, body: FormData, asker = ""): Promise<string> {
  const hash = createHash("sha256").update(`${asker.length}:${asker}\0`).update(key);
  for (const [name, value] of body) {
    if (name === ONCE_FIELD) continue;
    const text = typeof value === "string" ? value : `${value.name}\0${value.type}\0${value.size}`;
    hash.update(`\0${name.length}:${name}\0${text.length}:`).update(text);
    if (typeof value !== "string") { for await (const chunk of value.stream()) hash.update(chunk); }
  }
  return hash.digest("base64url");
}

/** The refusal of a repeat whose first outcome cannot be given again. */
export function alreadySent(): Error {
  return httpError(
    409,
    "This was sent already, and done once: reload the page to see the result.",
    { code: "already_sent" },
  );
}

/**
 * Claims `id`: `Held` when this post is the first of its submission, else the first's outcome,
 * waited for while it runs (a released key, or a lease that lapsed, is claimed again: the first
 * failed or died, this one runs). The wait also ends at half the time left before the request's
 * `deadline`: a repeat is refused in time, not ended by it as a failure.
 */
export async function claimSubmission(
  submissions: Submissions,
  id: string,
  deadline?: Pick<Deadline, "expiresAt" | "ms">,
): Promise<Held | Outcome> {
  const start = performance.now();
  const by = deadline?.expiresAt ?? Infinity;
  const until = Math.min(start + WAIT_MS, start + (by - start) / 2);
  let found = await submissions.claim(id, leaseMs(deadline));
  for (let look = LOOK_MS; found === "running" && performance.now() + look < until;) {
    await new Promise((resolve) => setTimeout(resolve, look));
    look = Math.min(look * 2, MOST_LOOK_MS);
    const now = await submissions.read(id);
    found = now === "gone" ? await submissions.claim(id, leaseMs(deadline)) : now;
  }
  if (found === "running") throw alreadySent();
  return found;
}

/** Most submissions one process keeps in memory: past it, the oldest are forgotten first. */
export const MEMORY_MOST = 10_000;

/**
 * One process's memory of submissions: for an app without KV, where one process answers. Kept
 * roughly in the order they end (each is set again, at the back, when it changes), so that a look
 * drops the ended ones from the front and stops at the first live one - not a scan of every
 * submission of the hour on each call - and at most `MEMORY_MOST` of them, whatever a client
 * sends. A lease shorter than the hour may end behind a live outcome: each look checks its own end.
 */
export function submissionsInMemory(): Submissions {
  const kept = new Map<string, { until: number; held: string; outcome?: Outcome }>();
  let serial = 0;
  const prune = () => {
    const now = Date.now();
    for (const [old, entry] of kept) {
      if (entry.until >= now && kept.size <= MEMORY_MOST) break;
      kept.delete(old);
    }
  };
  const keep = (id: string, ms: number, held: string, outcome?: Outcome) => {
    kept.delete(id);
    kept.set(id, { until: Date.now() + ms, held, outcome });
    prune();
  };
  const live = (id: string) => {
    prune();
    const entry = kept.get(id);
    return entry && entry.until >= Date.now() ? entry : undefined;
  };
  return {
    claim(id, lease) {
      const entry = live(id);
      if (entry) return Promise.resolve(entry.outcome ?? "running");
      const held = String(++serial);
      keep(id, lease, held);
      return Promise.resolve({ held });
    },
    settle(id, { held }, outcome) {
      // Gone (pruned once its lease lapsed, or released by a repeat that failed): this one's.
      const entry = kept.get(id);
      if (entry && entry.held !== held) return Promise.resolve(false);
      if (outcome) keep(id, ONCE_TTL_MS, held, outcome);
      else kept.delete(id);
      return Promise.resolve(true);
    },
    read(id) {
      const entry = live(id);
      return Promise.resolve(entry ? entry.outcome ?? "running" : "gone");
    },
  };
}
