/**
 * @module
 * A rendered body, copied for the page cache up to a bound: as it streams to its requester (a
 * miss), or read whole (a render in the background).
 *
 * A miss's copy is read ahead of its requester: the requests waiting for the page get it as soon
 * as the render made it, however slowly (or never) that requester reads. The bytes read ahead are
 * bounded per page (`max`, the largest page stored: a larger one goes at its client's pace), for
 * the process (`ReadAhead`: past it, copies go at their clients' pace) and in time (`holdMs`: a
 * requester that takes none of them for that long is cut off, and they are let go).
 */

/** The bytes all copies hold ahead of their clients, and how many they may. */
export interface ReadAhead {
  held: number;
  readonly limit: number;
}

/**
 * `body` passed through, copied on the way and read ahead of its reader (the module's comment
 * says how far): `ended` (which handles its own failures) gets the copy once it ended - before the
 * stream closes - or undefined as soon as it grew past `max`, failed, or its reader left.
 */
export function copyUpTo(
  body: ReadableStream<Uint8Array>,
  max: number,
  ahead: ReadAhead,
  holdMs: number,
  ended: (bytes: Uint8Array | undefined) => Promise<void>,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let chunks: Uint8Array[] | undefined = [];
  let size = 0;
  let over = false;
  const end = async (bytes?: Uint8Array) => {
    if (over) return;
    over = true;
    await ended(bytes);
  };
  /** Read from `body`, not yet taken by the reader. */
  const queue: Uint8Array[] = [];
  let queued = 0;
  /** `body` ended (and `ended` was told), or the reader left: nothing more is read. */
  let finished = false;
  let failure: { error: unknown } | undefined;
  /** When the reader last took a chunk: one that takes none for `holdMs` while some wait is cut. */
  let tookAt = performance.now();
  let limit: ReturnType<typeof setTimeout> | undefined;
  /** The reader waiting for a chunk; the pump waiting for the reader to take one. */
  let wake: (() => void) | undefined;
  let taken: (() => void) | undefined;

  const take = (): Uint8Array => {
    const chunk = queue.shift()!;
    queued -= chunk.byteLength;
    ahead.held -= chunk.byteLength;
    tookAt = performance.now();
    taken?.();
    return chunk;
  };
  /** The reader is gone, or too slow: what is held is let go, and the render with it. */
  const drop = (error?: unknown) => {
    if (error !== undefined) failure ??= { error };
    ahead.held -= queued;
    queue.length = 0;
    queued = 0;
    finished = true;
    taken?.();
    wake?.();
    reader.cancel(error).catch(() => {});
    return end();
  };

  (async () => {
    try {
      while (!finished) {
        // Ahead of the reader only while the copy is kept, and the process's bound allows.
        if (queued > 0 && (!chunks || queued > max || ahead.held >= ahead.limit)) {
          await new Promise<void>((resolve) => taken = resolve);
          taken = undefined;
          continue;
        }
        const read = await reader.read();
        if (read.done || finished) break;
        const chunk = read.value;
        if (chunks) {
          size += chunk.byteLength;
          if (size <= max) chunks.push(chunk.slice());
          else {
            chunks = undefined;
            await end(); // its waiters need not wait for the rest
          }
        }
        queue.push(chunk);
        queued += chunk.byteLength;
        ahead.held += chunk.byteLength;
        wake?.();
      }
      if (!finished) await end(chunks && concat(chunks, size));
    } catch (error) {
      failure = { error };
      await end();
    }
    finished = true;
    wake?.();
  })();

  const check = () => {
    const idle = performance.now() - tookAt;
    if (queued > 0 && idle >= holdMs) {
      return void drop(new Error(`the client took nothing of the page for ${holdMs} ms`));
    }
    if (finished && queued === 0) return; // nothing more is held
    const next = setTimeout(check, Math.max(holdMs - idle, 1));
    Deno.unrefTimer(next);
    limit = next;
  };
  check();

  return new ReadableStream({
    async pull(controller) {
      while (queue.length === 0 && !finished) {
        await new Promise<void>((resolve) => wake = resolve);
        wake = undefined;
      }
      if (queue.length > 0) return controller.enqueue(take());
      clearTimeout(limit);
      if (failure) controller.error(failure.error);
      else controller.close();
    },
    async cancel(reason) {
      clearTimeout(limit);
      await drop(reason);
    },
  }, { highWaterMark: 0 });
}

/** The whole body, or undefined once it grew past `max`. */
export async function readUpTo(body: ReadableStream<Uint8Array>, max: number) {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > max) return undefined; // leaving the loop cancels the stream
    chunks.push(chunk);
  }
  return concat(chunks, size);
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
