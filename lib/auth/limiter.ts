/**
 * @module
 * A bound on work that costs much memory at once — password hashing, 32 MiB a hash: at most
 * `concurrent` run together, at most `queued` more wait their turn, and past that a call is refused
 * at once with 503 and `Retry-After` (Hono's `HTTPException`, which the app answers as it is: no
 * failure, no digest, no report). So a burst of sign-ins can take neither the process's memory nor,
 * waiting, the requests' deadlines.
 */
import { HTTPException } from "hono/http-exception";

/** How long a refused client is told to wait, in seconds. */
const RETRY_AFTER_SECONDS = 1;

export interface Limiter {
  /** Runs `work` within the bound; rejects with a 503 `HTTPException` past the queue. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** How many run now, and how many wait (for tests and the bench). */
  readonly load: { running: number; waiting: number };
}

export function limiter(concurrent: number, queued: number): Limiter {
  if (!(concurrent >= 1) || !(queued >= 0)) {
    throw new RangeError("a limiter runs at least 1 at a time and queues 0 or more");
  }
  let running = 0;
  const waiting: (() => void)[] = [];
  const next = () => {
    const turn = waiting.shift();
    // The one that ends hands its place to the first in line: `running` stays as it is.
    if (turn) turn();
    else running--;
  };
  return {
    async run(work) {
      if (running >= concurrent) {
        if (waiting.length >= queued) throw busy();
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else {
        running++;
      }
      try {
        return await work();
      } finally {
        next();
      }
    },
    get load() {
      return { running, waiting: waiting.length };
    },
  };
}

function busy(): HTTPException {
  const res = new Response("Service Unavailable: too many sign-ins at once, try again shortly", {
    status: 503,
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      "Retry-After": String(RETRY_AFTER_SECONDS),
      "Cache-Control": "no-store",
    },
  });
  return new HTTPException(503, { res });
}
