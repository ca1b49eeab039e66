/**
 * @module
 * Suspense boundaries that fail while a page streams. React hands every error to `onError`, a
 * shell failure included - and that one rejects the render, so the caller answers it with a 500
 * and it must not be counted twice. So nothing is acted on before the shell is ready. Then a
 * boundary that already failed makes the render throw after all: nothing is sent yet, so the
 * status can still say 500 (or 404, for `notFound()`). Once the shell is out, each failure is
 * handed to `onFailure` at once (while the request is alive, so it is logged even if the client
 * leaves), and the HTML it returns ends the stream, after every instruction React wrote. The
 * digest it may return is React's for the boundary (`$RX`), so that HTML can find the boundary.
 */

import { type Deadline, type DeadlineClock, DeadlineExceeded } from "../server/deadline.ts";
import type { IslandsHead } from "./islands_head.ts";

export interface BoundaryFailure {
  /** HTML appended once React has finished the stream (awaited then, if a promise). */
  tail: string | Promise<string>;
  /** Stop rendering the rest of the page: the tail replaces it anyway. */
  stop: boolean;
  /** React's digest for the failed boundary: its fallback's `<template>` carries it. */
  digest?: string;
}

/**
 * One page's watch: a class, so that a request costs one object and the two functions React and
 * the deadline need (`onError`, `abort`), not a closure for every method. The request's abort
 * reaches it as an event listener object (`handleEvent`), not through a closure of its own.
 *
 * It is also the render's signal (`signal`), as much of one as React reads: `aborted`, `reason`
 * and one "abort" listener. An `AbortController` of its own cost every request a controller, a
 * signal, React's listener added to it through Deno's event machinery and removed again by an
 * event when the render ended (docs/performance.md, perf37).
 */
export class BoundaryWatch {
  /** Whether the render was stopped: the request's abort, the deadline, or a failure. */
  aborted = false;
  /** Why, once `aborted`: what React reports for the boundaries still waiting. */
  reason: unknown;
  /** React's, from `addEventListener`: dropped once the render has ended. */
  #onAbort: (() => void) | undefined;
  readonly #request: AbortSignal;
  readonly #clock: DeadlineClock;
  /**
   * Let go of once nothing can fail any more: the request's own objects (its context, which it
   * holds) are then no longer kept alive by React's request while the body is sent.
   */
  #failing: ((error: unknown) => BoundaryFailure) | undefined;
  /** Failures before the shell was ready, made only when there is one. */
  #early?: unknown[];
  #tails?: (string | Promise<string>)[];
  #shellReady = false;
  #expired = false;

  constructor(
    request: AbortSignal,
    onFailure: (error: unknown) => BoundaryFailure,
    deadline: Deadline | undefined,
    clock: DeadlineClock,
  ) {
    this.#request = request;
    this.#failing = onFailure;
    this.#clock = clock;
    // The request's abort forwarded to the render's: cheaper per request than `AbortSignal.any`,
    // whose weak references keep the garbage collector busy.
    if (request.aborted) this.abort(request.reason);
    else request.addEventListener("abort", this, ONCE);
    deadline?.onExpire(this.abort);
  }

  /** The request's abort (an `EventListener` object: no closure of its own). */
  handleEvent(): void {
    this.abort(this.#request.reason);
  }

  /** The render's signal, for React's `renderToReadableStream`. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal;
  }

  /** React's one listener (its `options`, which would remove it when the render ends, aside). */
  addEventListener(_type: "abort", listener: () => void): void {
    this.#onAbort = listener;
  }

  /** React 19.3 never calls it; a later React that does finds it, not a TypeError every render. */
  removeEventListener(_type: "abort", listener: () => void): void {
    if (this.#onAbort === listener) this.#onAbort = undefined;
  }

  /** Stops the render: the request's abort, a deadline's, or the client gone mid-stream. */
  readonly abort = (reason: unknown = new DOMException("The render was stopped", "AbortError")) => {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.#onAbort?.();
  };

  /** React's `onError`: returns the failed boundary's digest, if any. */
  readonly onError = (error: unknown): string | undefined => {
    if (this.#shellReady) return this.#fail(error);
    (this.#early ??= []).push(error);
  };

  #fail(error: unknown): string | undefined {
    if (this.#request.aborted) return;
    if (this.aborted) {
      // Once aborted, React reports the abort reason for every pending boundary: a failure only
      // when it is the deadline that passed, and then once.
      if (!(error instanceof DeadlineExceeded) || this.#expired) return;
      this.#expired = true;
    }
    if (!this.#failing) return;
    const failure = this.#failing(error);
    (this.#tails ??= []).push(failure.tail);
    if (failure.stop) this.abort();
    return failure.digest;
  }

  /** The render has ended: nothing can fail any more, and React's listener has nothing to stop. */
  #ended(): void {
    this.#failing = undefined;
    this.#onAbort = undefined;
  }

  /**
   * Call once the shell is ready, `complete` when React has nothing left to render; the stream
   * goes through what it returns - nothing when no boundary failed and none can fail any more -
   * and through `head`, if given, in the same stream (one stream a page, not two).
   * Throws what a boundary threw before this point, for the caller to answer instead.
   */
  shellReady(
    complete: boolean,
    allReady: Promise<void>,
    head?: IslandsHead,
  ): TransformStream<Uint8Array, Uint8Array> | undefined {
    if (this.#early) {
      this.abort();
      throw this.#early[0];
    }
    this.#shellReady = true;
    if (complete) {
      this.#ended();
      return undefined;
    }
    allReady.finally(() => this.#ended());
    // What still streams gets a deadline of its own.
    const streaming = this.#clock.start();
    if (streaming) {
      streaming.onExpire(this.abort);
      allReady.finally(() => streaming.clear());
    }
    return new TransformStream({
      transform: head && ((chunk, controller) => head.write(chunk, controller)),
      flush: async (controller) => {
        const tail = this.#tails &&
          new TextEncoder().encode((await Promise.all(this.#tails)).join(""));
        if (head) head.finish(controller, tail);
        else if (tail) controller.enqueue(tail);
      },
      // The client is gone (a write failed) before the request's signal says so: what React
      // then reports for the boundaries still waiting is that, not a failure.
      cancel: this.abort,
    });
  }
}

/** Made once: an options object per request is garbage per request. */
const ONCE: AddEventListenerOptions = { once: true };
