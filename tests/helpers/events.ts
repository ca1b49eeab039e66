/**
 * @module
 * A server-sent event stream read as it comes, for tests of live pages: its events parsed (`id`,
 * `event`, `data`) but the build every stream names first, its raw text, and a bounded wait for a
 * number of events; and an app of one event stream, for tests of streams themselves.
 */
import { eventStream, type EventStreamOptions, type ServerEvent } from "../../lib/mod.ts";
import type { App } from "../../lib/server.ts";
import { BUILD_EVENT } from "../../lib/shared/versions.ts";
import { Arrivals } from "../../lib/testing/arrivals.ts";
import { memoryApp } from "./app.ts";

/** An app in memory whose one route, `GET /events`, is an event stream of `source`. */
export function eventStreamApp(
  source: (signal: AbortSignal) => AsyncIterable<ServerEvent>,
  options?: EventStreamOptions,
): App {
  return memoryApp({
    routes: {
      "events.ts": { handler: { GET: (req, ctx) => eventStream(req, ctx, source, options) } },
    },
  });
}

export interface ServerSentEvent {
  id?: string;
  event?: string;
  data: string;
}

/** An open event stream: its events as they arrive, and a way to wait for a number of them. */
export interface EventReader extends AsyncDisposable {
  response: Response;
  events: ServerSentEvent[];
  /** Raw text received so far (comments and `retry:` included). */
  text(): string;
  /** Resolves once `count` events have arrived; rejects after `ms`. */
  waitFor(count: number, ms?: number): Promise<ServerSentEvent[]>;
  close(): Promise<void>;
}

/** Opens the event stream at `url`; `client`: a connection pool of its own (`Deno.HttpClient`). */
export async function readEvents(
  url: string,
  headers: HeadersInit = {},
  client?: Deno.HttpClient,
): Promise<EventReader> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal, client });
  const events: ServerSentEvent[] = [];
  let raw = "";
  let pending = "";
  const arrivals = new Arrivals();
  const reading = (async () => {
    try {
      for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) {
        raw += chunk;
        pending += chunk;
        let end;
        while ((end = pending.indexOf("\n\n")) >= 0) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          const event: ServerSentEvent = { data: "" };
          const data: string[] = [];
          for (const line of block.split("\n")) {
            const [field, ...rest] = line.split(": ");
            if (field === "id") event.id = rest.join(": ");
            else if (field === "event") event.event = rest.join(": ");
            else if (field === "data") data.push(rest.join(": "));
          }
          // The build naming the stream comes first in every one, as `retry:` does: the
          // framework's, not the source's (it stays in `text()`).
          if (event.event === BUILD_EVENT) continue;
          if (data.length) events.push({ ...event, data: data.join("\n") });
        }
        arrivals.arrived();
      }
    } catch { /* aborted */ }
    arrivals.arrived();
  })();
  const close = async () => {
    controller.abort();
    await reading;
  };
  return {
    response,
    events,
    text: () => raw,
    waitFor: (count, ms = 5_000) =>
      arrivals.until(
        () => events.length >= count ? events.slice(0, count) : undefined,
        ms,
        () => `${events.length} of ${count} events in ${ms} ms:\n${raw}`,
      ),
    close,
    [Symbol.asyncDispose]: close,
  };
}
