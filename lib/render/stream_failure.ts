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

export interface BoundaryFailure {
  /** HTML appended once React has finished the stream (awaited then, if a promise). */
  tail: string | Promise<string>;
  /** Stop rendering the rest of the page: the tail replaces it anyway. */
  stop: boolean;
  /** React's digest for the failed boundary: its fallback's `<template>` carries it. */
  digest?: string;
}

export interface BoundaryWatch {
  /** The render's signal: the request's, or ours once a failure stopped it. */
  signal: AbortSignal;
  /** React's `onError`: returns the failed boundary's digest, if any. */
  onError(error: unknown): string | undefined;
  /**
   * Call once the shell is ready, `complete` when React has nothing left to render; the stream
   * goes through what it returns - nothing when no boundary failed and none can fail any more.
   * Throws what a boundary threw before this point, for the caller to answer instead.
   */
  shellReady(
    complete: boolean,
    allReady: Promise<void>,
  ): TransformStream<Uint8Array, Uint8Array> | undefined;
}

export function watchBoundaries(
  request: AbortSignal,
  onFailure: (error: unknown) => BoundaryFailure,
  deadline: Deadline | undefined,
  clock: DeadlineClock,
): BoundaryWatch {
  const render = new AbortController();
  const abort = forwardAborts(request, render);
  deadline?.onExpire(abort);
  // Let go of once nothing can fail any more: the request's own objects (its context, which
  // `onFailure` holds) are then no longer kept alive by React's request while the body is sent.
  let failing: typeof onFailure | undefined = onFailure;
  const early: unknown[] = [];
  const tails: (string | Promise<string>)[] = [];
  let shellReady = false;
  let expired = false;

  const fail = (error: unknown): string | undefined => {
    if (request.aborted) return;
    if (render.signal.aborted) {
      // Once aborted, React reports the abort reason for every pending boundary: a failure only
      // when it is the deadline that passed, and then once.
      if (!(error instanceof DeadlineExceeded) || expired) return;
      expired = true;
    }
    if (!failing) return;
    const failure = failing(error);
    tails.push(failure.tail);
    if (failure.stop) render.abort();
    return failure.digest;
  };

  return {
    signal: render.signal,
    onError(error) {
      if (shellReady) return fail(error);
      early.push(error);
    },
    shellReady(complete, allReady) {
      if (early.length > 0) {
        render.abort();
        throw early[0];
      }
      shellReady = true;
      if (complete) {
        failing = undefined;
        return undefined;
      }
      allReady.finally(() => failing = undefined);
      // What still streams gets a deadline of its own.
      const streaming = clock.start();
      if (streaming) {
        streaming.onExpire(abort);
        allReady.finally(() => streaming.clear());
      }
      return new TransformStream({
        async flush(controller) {
          if (tails.length === 0) return;
          const tail = (await Promise.all(tails)).join("");
          controller.enqueue(new TextEncoder().encode(tail));
        },
        // The client is gone (a write failed) before the request's signal says so: what React
        // then reports for the boundaries still waiting is that, not a failure.
        cancel: abort,
      });
    },
  };
}

/**
 * The request's abort (and the deadline's, through what this returns) forwarded to `render`:
 * cheaper per request than `AbortSignal.any`, whose weak references keep the garbage collector
 * busy. A function of its own so that the listener, which lives as long as the request, holds
 * these two and nothing else of the watch.
 */
function forwardAborts(request: AbortSignal, render: AbortController): (reason: unknown) => void {
  const abort = (reason: unknown) => render.abort(reason);
  if (request.aborted) abort(request.reason);
  else request.addEventListener("abort", () => abort(request.reason), { once: true });
  return abort;
}
