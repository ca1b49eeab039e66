/**
 * @module
 * Waiting on what a helper collects as it arrives - spans, Sentry items, a server's log lines,
 * server-sent events: the helper calls `arrived()` after each arrival, and `until(find, ms, why)`
 * resolves with the first value `find` returns, checked at once and after every arrival, or rejects
 * after `ms` with the message `why()` gives then (what was seen instead). `end(error)`, as the
 * helper is disposed, rejects every wait at once, so none keeps its timer to the end.
 */
interface Waiter {
  check(): void;
  end(error: Error): void;
}

export class Arrivals {
  #waiters = new Set<Waiter>();
  #ended?: Error;

  arrived(): void {
    for (const waiter of this.#waiters) waiter.check();
  }

  /** Rejects every wait under way, and every later one, with `error`. */
  end(error: Error): void {
    this.#ended = error;
    for (const waiter of this.#waiters) waiter.end(error);
  }

  until<T>(find: () => T | undefined, ms: number, why: () => string): Promise<T> {
    if (this.#ended) return Promise.reject(this.#ended);
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found === undefined) return;
        done();
        resolve(found);
      };
      const end = (error: Error) => {
        done();
        reject(error);
      };
      const timer = setTimeout(() => end(new Error(why())), ms);
      const waiter = { check, end };
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
      };
      this.#waiters.add(waiter);
      check();
    });
  }
}
