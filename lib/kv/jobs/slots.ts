/**
 * @module
 * A process's bound on the jobs of one declaration running at once (`concurrency`), and the slot
 * one delivery holds: given back while it only waits (on its run elsewhere), taken again to run.
 */

/** A slot held by one delivery. */
export interface Slot {
  /** Gives the slot back to the next waiting (once; again only after `retake`). */
  release(): void;
  /** Takes a slot again after a `release`, waiting as `Slots.take` does; held already: nothing. */
  retake(): Promise<void>;
}

/** At most `size` holders at once; the others wait, first come first served. */
export class Slots {
  #free: number;
  /** Who waits, in order: a Set, so that one whose app closed leaves from anywhere in it. */
  readonly #waiting = new Set<() => void>();

  constructor(size: number) {
    this.#free = size;
  }

  /** Resolves with the slot once one is free; rejects if `closing` aborts first. */
  async take(closing: AbortSignal | undefined, refused: () => Error): Promise<Slot> {
    await this.#enter(closing, refused);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.#release();
      },
      retake: async () => {
        if (held) return;
        await this.#enter(closing, refused);
        held = true;
      },
    };
  }

  async #enter(closing: AbortSignal | undefined, refused: () => Error): Promise<void> {
    if (closing?.aborted) throw refused();
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const granted = () => {
        closing?.removeEventListener("abort", abandon);
        resolve();
      };
      const abandon = () => {
        this.#waiting.delete(granted);
        reject(refused());
      };
      this.#waiting.add(granted);
      closing?.addEventListener("abort", abandon, { once: true });
    });
  }

  /** Hands the slot to the first waiting, else frees it. */
  #release(): void {
    const next = this.#waiting.values().next();
    if (next.done) {
      this.#free++;
      return;
    }
    this.#waiting.delete(next.value);
    next.value();
  }
}
