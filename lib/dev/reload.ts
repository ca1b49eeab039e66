/**
 * @module
 * Live reload for `deno task dev`. Each server process has an id, and its pages carry a tiny
 * script that listens to `RELOAD_PATH`, an event stream sending the id of the process answering.
 * When the dev loop restarts the server the stream drops, the browser reconnects to the new
 * process, receives another id and reloads the page. Production never registers any of this.
 */
import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";

export const RELOAD_PATH = "/_dev/reload";

/** How soon the browser reconnects once the stream drops, in ms. */
const RETRY = 200;

export interface LiveReload {
  /** The inline script a page of this process carries. */
  script: string;
  /** Ends every open stream, so that a graceful shutdown need not wait for them. */
  close(): void;
}

/** Serves the event stream on `app` and returns the matching page script. */
export function liveReload(app: Hono, id: string = crypto.randomUUID()): LiveReload {
  const ends = new Set<() => void>();
  let closed = false;
  app.get(RELOAD_PATH, (c) =>
    streamSSE(c, async (stream) => {
      await stream.writeSSE({ data: id, retry: RETRY });
      if (closed) return;
      await new Promise<void>((end) => {
        ends.add(end);
        stream.onAbort(() => {
          ends.delete(end);
          end();
        });
      });
    }));
  return {
    script: `new EventSource(${JSON.stringify(RELOAD_PATH)}).onmessage = (event) => {
  if (event.data !== ${JSON.stringify(id)}) location.reload();
};`,
    close() {
      closed = true;
      for (const end of ends) end();
      ends.clear();
    },
  };
}
