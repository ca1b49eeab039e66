/**
 * @module
 * The app's requests in flight, counted for a stop: under `deno serve` nothing but the app knows
 * when the last request is done with the KV store, and the store's queue listener holds the
 * process until it closes (`lib/cli/stop.ts`). A request counts from the app's step around it
 * (`frame.ts`) until its answer is ready; a page's render counts too (`render/page.tsx`), until
 * React has nothing left to render: a Suspense boundary may read KV long after the shell went out.
 * Per request: an increment and a decrement, and for a page one reaction on `allReady` with a
 * function made once - no closure, no listener.
 */
export class InFlight {
  #open = 0;
  #idle?: PromiseWithResolvers<void>;

  /** A request (or a render) begins. */
  enter(): void {
    this.#open++;
  }

  /** One ends (a field: handed to `then` as it is). */
  readonly leave = (): void => {
    if (--this.#open === 0 && this.#idle) {
      this.#idle.resolve();
      this.#idle = undefined;
    }
  };

  /** Counts one until `until` settles (it must not reject). */
  hold(until: Promise<void>): void {
    this.#open++;
    until.then(this.leave);
  }

  /** Resolves once nothing is in flight (at once, when nothing is). */
  idle(): Promise<void> {
    if (this.#open === 0) return Promise.resolve();
    return (this.#idle ??= Promise.withResolvers()).promise;
  }
}
