/**
 * @module
 * A rendered body, copied for the page cache up to a bound: as it streams to its requester (a
 * miss), or read whole (a render in the background).
 */

/**
 * `body` passed through, copied on the way: `ended` (which handles its own failures) gets the copy
 * once it ended - before its last byte goes out - or undefined once it grew past `max`, failed, or
 * its reader left.
 */
export function copyUpTo(
  body: ReadableStream<Uint8Array>,
  max: number,
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
  return new ReadableStream({
    async pull(controller) {
      let read;
      try {
        read = await reader.read();
      } catch (error) {
        await end();
        return controller.error(error);
      }
      if (read.done) {
        await end(chunks && concat(chunks, size));
        return controller.close();
      }
      const chunk = read.value;
      if (chunks) {
        size += chunk.byteLength;
        if (size > max) chunks = undefined;
        else chunks.push(chunk.slice());
      }
      controller.enqueue(chunk);
    },
    async cancel(reason) {
      await reader.cancel(reason);
      await end();
    },
  });
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
