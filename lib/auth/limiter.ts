/**
 * @module
 * A bound on work that costs much memory at once - password hashing, 32 MiB a hash: at most
 * `concurrent` run together, at most `queued` more wait their turn, and past that a call is refused
 * at once with 503 and `Retry-After` (Hono's `HTTPException`, which the app answers as it is: no
 * failure, no digest, no report). A waiting call given the time its request must be answered by
 * (`by`, the request's deadline) gives up the same way, still in time for that answer, once the
 * wait would leave less than the work may take (the slowest recent run, see `estimate`), and a
 * run still going just before `by` is answered the same way (it goes on, holding its place): a
 * sign-in stuck in the queue, or starved of CPU, is a 503 to retry, never a deadline passed (a 500
 * with a digest). So a burst of sign-ins can take neither the process's memory nor, waiting, the
 * requests' deadlines.
 *
 * Each 503 says which of the three happened - the queue was full, the calls ahead left no time,
 * or the machine ran this one too slowly - and `Retry-After` is when the work ahead should be
 * done (`estimate` times the rounds of it): a lone sign-in on a slow machine is never told that
 * there are too many.
 */
import { HTTPException } from "hono/http-exception";

/** How much each faster run lowers the estimate: a moving average over about ten. */
const SMOOTHING = 0.1;
/** A run's duration until one has been measured: above a password hash's on a slow machine. */
const FIRST_ESTIMATE_MS = 500;
/** How much slower than the estimate a run may still be: load makes each hash vary. */
const MARGIN = 1.5;
/** Kept back for what the request does after the work (a session written) and its answer. */
const AFTER_MS = 50;

export interface RunOptions {
  /**
   * When the work must have finished, on `performance.now()`'s clock (a request's deadline): a
   * call that has to wait gives up with a 503 rather than wait, or start, past the last moment it
   * still could.
   */
  by?: number;
}

export interface Limiter {
  /** Runs `work` within the bound; rejects with a 503 `HTTPException` past the queue or `by`. */
  run<T>(work: () => Promise<T>, options?: RunOptions): Promise<T>;
  /** How many run now, and how many wait (for tests and the bench). */
  readonly load: { running: number; waiting: number };
}

/** Why a call was refused: each gets its own 503 message. */
type Refusal = "full" | "late" | "slow";

interface Waiter {
  /** Its turn: it runs now, in the place of the one that ended. */
  turn(): void;
}

export function limiter(concurrent: number, queued: number): Limiter {
  if (!(concurrent >= 1) || !(queued >= 0)) {
    throw new RangeError("a limiter runs at least 1 at a time and queues 0 or more");
  }
  let running = 0;
  /**
   * How long a run may take (ms). A slower run raises it at once and faster ones lower it slowly:
   * under load each hash is slower than the last, and an average that lags lets a call start that
   * cannot finish in time (measured: on a busy two-core machine the second of 24 sign-ins did).
   */
  let estimateMs = FIRST_ESTIMATE_MS;
  const waiting = new Set<Waiter>();
  const next = () => {
    const first = waiting.values().next();
    // The one that ends hands its place to the first in line: `running` stays as it is.
    if (first.done) running--;
    else {
      waiting.delete(first.value);
      first.value.turn();
    }
  };
  /** The last moment work may start and still be answered by `by`, as runs may take. */
  const lastStart = (by: number) => by - estimateMs * MARGIN - AFTER_MS;
  const tooLate = (by: number | undefined) =>
    by !== undefined && performance.now() >= lastStart(by);
  /**
   * A 503 for `why`. Retry-After: the work ahead of a new call (each run and wait, `concurrent` at
   * a time) at the estimate - or at what the run refused for `slow` has taken so far, if more.
   */
  const refuse = (why: Refusal, tookMs = 0): HTTPException => {
    const rounds = Math.ceil((running + waiting.size) / concurrent);
    const seconds = Math.ceil((Math.max(1, rounds) * Math.max(estimateMs, tookMs)) / 1000);
    return busy(why, Math.max(1, seconds));
  };
  const queue = (by: number | undefined) =>
    new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        turn() {
          clearTimeout(giveUp);
          resolve();
        },
      };
      waiting.add(waiter);
      const giveUp = by === undefined ? undefined : setTimeout(() => {
        waiting.delete(waiter);
        reject(refuse("late"));
      }, Math.max(0, lastStart(by) - performance.now()));
    });
  return {
    async run(work, { by } = {}) {
      // A call with a free place starts at once, whatever `by`: it has the best chance there is,
      // and it measures what a run takes.
      if (running >= concurrent) {
        if (waiting.size >= queued) throw refuse("full");
        await queue(by);
        if (tooLate(by)) {
          next();
          throw refuse("late");
        }
      } else {
        running++;
      }
      const started = performance.now();
      const done = work().finally(() => {
        const took = performance.now() - started;
        estimateMs = Math.max(took, estimateMs + SMOOTHING * (took - estimateMs));
        next();
      });
      if (by === undefined) return await done;
      const late = () => refuse("slow", performance.now() - started);
      return await doneBy(done, by - AFTER_MS, late);
    },
    get load() {
      return { running, waiting: waiting.size };
    },
  };
}

/**
 * What `work` gives, or `refusal()` at `at` when it still runs then: a machine slower than every
 * estimate (a run started on time, then starved of CPU) still answers before the request's
 * deadline. The run goes on, holding its place, so the bound on memory holds; its outcome is
 * nobody's.
 */
function doneBy<T>(work: Promise<T>, at: number, refusal: () => HTTPException): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const late = setTimeout(() => reject(refusal()), Math.max(0, at - performance.now()));
    work.then((value) => {
      clearTimeout(late);
      resolve(value);
    }, (error) => {
      clearTimeout(late);
      reject(error);
    });
  });
}

/** What each refusal tells the client: what happened, and when to try again. */
const MESSAGES: Record<Refusal, string> = {
  full: "too many sign-ins at once",
  late: "the server is busy with the sign-ins ahead of this one, which would not end in time",
  slow: "the server is too busy to check a password in time",
};

function busy(why: Refusal, retryAfterSeconds: number): HTTPException {
  const text = `Service Unavailable: ${MESSAGES[why]}; try again in ${retryAfterSeconds} s`;
  const res = new Response(text, {
    status: 503,
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      "Retry-After": String(retryAfterSeconds),
      "Cache-Control": "no-store",
    },
  });
  return new HTTPException(503, { res });
}
