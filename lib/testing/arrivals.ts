/**
 * @module
 * Waiting on what a helper collects as it arrives - spans, Sentry items, a server's log lines,
 * server-sent events: the helper calls `arrived()` after each arrival, and `until(find, ms, why)`
 * resolves with the first value `find` returns, checked at once and after every arrival, or rejects
 * after `ms` with the message `why()` gives then (what was seen instead).
 */
export class Arrivals {
  #waiters = new Set<() => void>();

  arrived(): void {
    for (const wake of this.#waiters) wake();
  }

  until<T>(find: () => T | undefined, ms: number, why: () => string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found === undefined) return;
        done();
        resolve(found);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(why()));
      }, ms);
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
      check();
    });
  }
}
