/**
 * @module
 * The event stream open pages listen to (`client/dev/client.ts`): served by the dev server
 * itself, so it outlives every restart of the app's server. Each connection first gets `hello`
 * (the session, the current version, a failing build's error), then every event as it happens.
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { Hello } from "../client/dev/protocol.ts";

/** How soon a browser reconnects once the stream drops, in ms. */
const RETRY_MS = 200;

export interface DevEvents {
  /** The stream, for `GET /_dev/events`. */
  serve(c: Context): Response;
  send(event: string, data: object): void;
  /** Ends every stream, so that the server can shut down. */
  close(): void;
}

export function devEvents(hello: () => Hello): DevEvents {
  const streams = new Map<(event: string, data: string) => void, () => void>();
  return {
    serve: (c) =>
      streamSSE(c, async (stream) => {
        let end!: () => void;
        const ended = new Promise<void>((resolve) => end = resolve);
        // Writes go in order, `hello` first, and no event can fall between it and the others.
        let written = stream.writeSSE({
          event: "hello",
          data: JSON.stringify(hello()),
          retry: RETRY_MS,
        });
        const send = (event: string, data: string) => {
          written = written.then(() => stream.writeSSE({ event, data })).catch(end);
        };
        streams.set(send, end);
        stream.onAbort(end);
        await ended;
        streams.delete(send);
      }),
    send(event, data) {
      const text = JSON.stringify(data);
      for (const send of streams.keys()) send(event, text);
    },
    close() {
      for (const end of streams.values()) end();
    },
  };
}
