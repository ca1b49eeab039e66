/**
 * @module
 * Suspense boundaries that fail while a page streams. React hands every error to `onError`, a
 * shell failure included — and that one rejects the render, so the caller answers it with a 500
 * and it must not be counted twice. So nothing is acted on before the shell is ready. Then a
 * boundary that already failed makes the render throw after all: nothing is sent yet, so the
 * status can still say 500 (or 404, for `notFound()`). Once the shell is out, each failure is
 * handed to `onFailure` at once (while the request is alive, so it is logged even if the client
 * leaves), and the HTML it returns ends the stream, after every instruction React wrote.
 */

export interface BoundaryFailure {
  /** HTML appended once React has finished the stream. */
  tail: string;
  /** Stop rendering the rest of the page: the tail replaces it anyway. */
  stop: boolean;
}

export interface BoundaryWatch {
  /** The render's signal: the request's, or ours once a failure stopped it. */
  signal: AbortSignal;
  onError(error: unknown): void;
  /**
   * Call once the shell is ready, `complete` when React has nothing left to render; the stream
   * goes through what it returns — nothing when no boundary failed and none can fail any more.
   * Throws what a boundary threw before this point, for the caller to answer instead.
   */
  shellReady(complete: boolean): TransformStream<Uint8Array, Uint8Array> | undefined;
}

export function watchBoundaries(
  request: AbortSignal,
  onFailure: (error: unknown) => BoundaryFailure,
): BoundaryWatch {
  // The request's abort is forwarded to our controller: cheaper per request than
  // `AbortSignal.any`, whose weak references also keep the garbage collector busy.
  const render = new AbortController();
  if (request.aborted) render.abort(request.reason);
  else request.addEventListener("abort", () => render.abort(request.reason), { once: true });
  const early: unknown[] = [];
  const tails: string[] = [];
  let shellReady = false;

  const fail = (error: unknown) => {
    // Once aborted, React reports the abort reason for every pending boundary: not failures.
    if (request.aborted || render.signal.aborted) return;
    const failure = onFailure(error);
    tails.push(failure.tail);
    if (failure.stop) render.abort();
  };

  return {
    signal: render.signal,
    onError(error) {
      if (shellReady) fail(error);
      else early.push(error);
    },
    shellReady(complete) {
      if (early.length > 0) {
        render.abort();
        throw early[0];
      }
      shellReady = true;
      if (complete) return undefined;
      return new TransformStream({
        flush(controller) {
          if (tails.length) controller.enqueue(new TextEncoder().encode(tails.join("")));
        },
      });
    },
  };
}
