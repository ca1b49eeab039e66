/**
 * @module
 * Which repeats of a failure are sent to telemetry, for failures the browser repeats on its own:
 * an event stream whose source fails is opened again by every page that holds it, a second later,
 * for as long as the page stays open (measured: 50 pages on a source that always throws, 40-50
 * Sentry events a second, one per reconnection - the SDK bounds none of it). The first failure of
 * a digest is sent, then none of it until `ms` later; each still writes its line. Kept per app and
 * process, for at most `max` digests (the oldest sent goes first), so a message that varies cannot
 * grow it.
 *
 * With a store the processes share (`shared`: `repeatsInKv`, the app's KV), the bound holds across
 * them: N `deno serve --parallel` workers or Deploy isolates sent N events a window for one digest,
 * one each. The process's own window stays in front, so a burst in one process asks the store once
 * a window at most (failures meanwhile wait for that answer), and the answer - this process sends,
 * or another sent less than `ms` ago, as that event - is kept in the window too. A store that
 * fails, or takes longer than `waitMs`, leaves it to the process's own window: the failure is sent,
 * and one warning line says so - one a window at most, however many failures meet the store down.
 */
import { log } from "../server/log.ts";

/** What was sent for a digest: when, and the event id it got. */
export interface Sent {
  at: number;
  eventId: string | null;
}

/**
 * What the processes sharing a store sent: `mine` (this process's sending, now) goes in unless one
 * of them sent `digest` less than `ms` before it, whose sending is then the answer; `undefined`:
 * `mine` went in, this process sends it.
 */
export type SharedRepeats = (digest: string, mine: Sent, ms: number) => Promise<Sent | undefined>;

export interface RepeatWindowOptions {
  /** The store the processes share; none: the bound is the process's. */
  shared?: SharedRepeats;
  /** How long a failure waits for the store's answer before the process's window decides. */
  waitMs?: number;
  now?: () => number;
}

export class RepeatWindow {
  readonly #sent = new Map<string, Sent>();
  /** The store's answers awaited, by digest: what the digest's failures meanwhile repeat. */
  readonly #asking = new Map<string, Promise<Sent>>();
  readonly #shared?: SharedRepeats;
  readonly #waitMs: number;
  readonly #now: () => number;
  /** When the last warning that the store gave no answer was written. */
  #warnedAt = -Infinity;

  constructor(
    readonly ms: number,
    readonly max: number,
    { shared, waitMs = 500, now = Date.now }: RepeatWindowOptions = {},
  ) {
    this.#shared = shared;
    this.#waitMs = waitMs;
    this.#now = now;
  }

  /** What was sent for `digest` less than `ms` ago by this process, if anything was. */
  repeated(digest: string): Sent | undefined {
    const last = this.#sent.get(digest);
    return last && this.#now() - last.at < this.ms ? last : undefined;
  }

  /** `digest` was sent at `at` (now by default), as `eventId`. */
  sent(digest: string, eventId: string | null, at = this.#now()): void {
    this.#sent.delete(digest); // to the end: the map's first entry is the one sent longest ago
    if (this.#sent.size >= this.max) this.#sent.delete(this.#sent.keys().next().value!);
    this.#sent.set(digest, { at, eventId });
  }

  /**
   * Whether a failure of `digest` now repeats one sent less than `ms` ago: that sending, or
   * `undefined` when this failure is to be sent, as `eventId`. A promise only while the shared
   * store is asked (this process's first failure of the digest in a window, and the failures of it
   * that come meanwhile); it never rejects.
   */
  check(digest: string, eventId: string | null): Sent | undefined | Promise<Sent | undefined> {
    const last = this.repeated(digest) ?? this.#asking.get(digest);
    if (last) return last;
    const mine = { at: this.#now(), eventId };
    if (!this.#shared) {
      this.sent(digest, eventId, mine.at);
      return undefined;
    }
    const answer = inTime(this.#shared(digest, mine, this.ms), this.#waitMs).then((outcome) => {
      const theirs = "answer" in outcome ? outcome.answer : this.#alone(outcome.error);
      // Another process's clock may run ahead: its sending counts from now at the latest.
      if (theirs) this.sent(digest, theirs.eventId, Math.min(theirs.at, this.#now()));
      else this.sent(digest, eventId, mine.at);
      this.#asking.delete(digest);
      return theirs;
    });
    this.#asking.set(digest, answer.then((theirs) => theirs ?? mine));
    return answer;
  }

  /**
   * The store gave no answer (`error`): the process's window decides alone, which an operator
   * should know - the bound then holds per process, not across them - once a window, not once a
   * failure.
   */
  #alone(error: string): undefined {
    const now = this.#now();
    if (now - this.#warnedAt < this.ms) return;
    this.#warnedAt = now;
    const fields = { error, window_ms: this.ms };
    log("warn", "failure repeats: no answer from KV, this process's window alone decides", fields);
  }
}

/** What `work` gives within `ms`, or why not: its error, or that it took longer (not awaited). */
function inTime<T>(work: Promise<T>, ms: number): Promise<{ answer: T } | { error: string }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<{ error: string }>((resolve) =>
    timer = setTimeout(() => resolve({ error: `no answer within ${ms} ms` }), ms)
  );
  return Promise.race([
    work.then((answer) => ({ answer }), (error) => ({ error: String(error) })),
    late,
  ]).finally(() => clearTimeout(timer));
}
