/**
 * @module
 * The comments that keep idle event streams open past proxies: one timer per period for every
 * stream of that period, not one per stream. A timer of its own per stream held its closure - and
 * through it the stream's request, context and source - from a global table, and cost each of
 * thousands of streams a timer object, a closure and a fresh chunk every beat.
 */

const PING = new TextEncoder().encode(": ping\n\n");

/** The streams beating every `ms`, and the one timer that beats them while there is any. */
const beats = new Map<
  number,
  { streams: Set<ReadableStreamDefaultController>; timer: ReturnType<typeof setInterval> }
>();

/**
 * Sends a comment on `stream` every `ms` or so (the first within `ms`), when its client has read
 * what came before - a client that reads nothing is not sent a queue of them. Until the returned
 * function is called.
 */
export function beat(stream: ReadableStreamDefaultController, ms: number): () => void {
  let beating = beats.get(ms);
  if (!beating) {
    const streams = new Set<ReadableStreamDefaultController>();
    const timer = setInterval(() => {
      for (const each of streams) if ((each.desiredSize ?? 0) > 0) each.enqueue(PING);
    }, ms);
    beats.set(ms, beating = { streams, timer });
  }
  const { streams, timer } = beating;
  streams.add(stream);
  return () => {
    if (!streams.delete(stream) || streams.size > 0) return;
    clearInterval(timer);
    beats.delete(ms);
  };
}
