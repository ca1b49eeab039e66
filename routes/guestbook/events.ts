/**
 * `GET /guestbook/events`: new guestbook entries as server-sent events (`event: entry`, the entry
 * as JSON, its id as the event id), for the island's `EventSource`. `?since=` is the newest id the
 * page has; a reconnecting `EventSource` sends `Last-Event-ID` instead. Either way what was missed
 * comes first. All of a worker's streams share one KV watch.
 */
import { defineRoute, eventStream } from "shell";
import { kvOf, sinceOf } from "shell/data";
import { entryFeed } from "@/routes/_guestbook/entries.ts";

const route = defineRoute("guestbook/events.ts");

export const handler = route.handlers({
  GET(req, ctx) {
    const feed = entryFeed(kvOf(ctx));
    const since = sinceOf(req, ctx.url);
    return eventStream(req, ctx, async function* (signal) {
      for await (const entry of feed.subscribe(since, { signal })) {
        yield { id: entry.id, event: "entry", data: JSON.stringify(entry) };
      }
    });
  },
});
