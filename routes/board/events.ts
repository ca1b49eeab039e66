/**
 * `GET /board/events`: the board's changes as server-sent events, for the island's
 * `useLiveCollection` — from the number the page's snapshot is at (`?since=`, or `Last-Event-ID`
 * after a reconnect), every change exactly once; a fresh snapshot for a page too long away.
 */
import { defineRoute } from "shell";
import { changeStream } from "shell/data";
import { tasks } from "./_tasks/tasks.ts";
import { SHOWN } from "./_tasks/types.ts";

export const handler = defineRoute("board/events.ts").handlers({
  GET: (req, ctx) => changeStream(req, ctx, tasks, { limit: SHOWN }),
});
