/**
 * @module
 * The app's requests in flight, counted for a stop: under `deno serve` nothing but the app knows
 * when the last request is done with the KV store, and the store's queue listener holds the
 * process until it closes (`lib/cli/stop.ts`). A request counts from the app's step around it
 * (`frame.ts`) until its answer is ready; a page's render counts too (`render/page.tsx`), until
 * React has nothing left to render: a Suspense boundary may read KV long after the shell went out;
 * a handler's own response (an API route's stream), and an earlier build's asset read from KV as
 * it is sent, until the server has sent it, when the server says so (`Deno.serve`'s `completed`;
 * in-process, until it is ready).
 * Per request: an increment and a decrement, and for a page one reaction on `allReady` (for a
 * handler's own response, on `completed`) with a function made once - no closure, no listener.
 * Once drained for a stop (`drain`), the count is shut: the frame refuses every later request
 * (503) rather than let it meet a closed store.
 */
declare module "./internals.ts" {
  interface Internals {
    /**
     * The answer is a handler's own response (not its page), or an earlier build's asset read
     * from KV (`kept_assets.ts`): counted until it is sent, when the server says
     * (`Deno.ServeHandlerInfo.completed`), as its body may read KV (`frame.ts`).
     */
    ownBody: true;
  }
}

export class InFlight {
  #open = 0;
  #idle?: PromiseWithResolvers<void>;
  #draining = false;
  /**
   * Whether the app let go of KV for good (`drain`): set in the same step as the count reaches
   * nothing, so no request can enter between it and the store's close.
   */
  shut = false;

  /** A request (or a render) begins. */
  enter(): void {
    this.#open++;
  }

  /** One ends (a field: handed to `then` as it is). */
  readonly leave = (): void => {
    if (--this.#open === 0 && this.#idle) {
      if (this.#draining) this.shut = true;
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

  /** As `idle`, and `shut` from the moment nothing is in flight. */
  drain(): Promise<void> {
    this.#draining = true;
    if (this.#open === 0) this.shut = true;
    return this.idle();
  }
}
