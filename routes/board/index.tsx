import Board from "@/islands/Board.tsx";
import { defineRoute } from "shell";
import { kvOf } from "shell/data";
import type { Entity, Snapshot } from "shell/runtime";
import { type Activity, activity, RECENT } from "./_tasks/activity.ts";
import { tasks } from "./_tasks/tasks.ts";
import { LABELS, SHOWN, type Task } from "./_tasks/types.ts";

const route = defineRoute("board/index.tsx");

export const handler = route.handlers<{ snapshot: Snapshot<Task>; recent: Entity<Activity>[] }>({
  async GET(_req, ctx) {
    const kv = kvOf(ctx);
    const [snapshot, recent] = await Promise.all([
      tasks.snapshot(kv, { limit: SHOWN }),
      activity.list(kv, { reverse: true, limit: RECENT }),
    ]);
    return ctx.render({ snapshot, recent: recent.items });
  },
});

/** `ada moved "Water the plants" to Doing`. */
function said({ by, did, title }: Activity): string {
  if (did === "added" || did === "deleted") return `${by} ${did} “${title}”`;
  return `${by} moved “${title}” to ${LABELS[did]}`;
}

export default route.page<typeof handler>(({ data }) => (
  <>
    <title>Task board</title>
    <h1>Task board</h1>
    <p>
      One board for the whole team. Tasks live in a Deno KV collection; every board open anywhere
      shows what is added, moved and deleted, as it happens. It works with JavaScript off too.
    </p>
    <Board snapshot={data.snapshot} />
    {data.recent.length > 0 && (
      <section aria-labelledby="recent">
        <h2 id="recent">Latest changes</h2>
        <p>As this page was loaded: each change and its line here are one commit.</p>
        <ul>
          {data.recent.map((change) => <li key={change.id}>{said(change.value)}</li>)}
        </ul>
      </section>
    )}
  </>
));
