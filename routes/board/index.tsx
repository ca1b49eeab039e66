import Board from "@/islands/Board.tsx";
import { defineRoute } from "shell";
import { kvOf } from "shell/data";
import type { Snapshot } from "shell/runtime";
import { tasks } from "./_tasks/tasks.ts";
import { SHOWN, type Task } from "./_tasks/types.ts";

const route = defineRoute("board/index.tsx");

export const handler = route.handlers<{ snapshot: Snapshot<Task> }>({
  async GET(_req, ctx) {
    return ctx.render({ snapshot: await tasks.snapshot(kvOf(ctx), { limit: SHOWN }) });
  },
});

export default route.page<typeof handler>(({ data }) => (
  <>
    <title>Task board</title>
    <h1>Task board</h1>
    <p>
      One board for the whole team. Tasks live in a Deno KV collection; every board open anywhere
      shows what is added, moved and deleted, as it happens. It works with JavaScript off too.
    </p>
    <Board snapshot={data.snapshot} />
  </>
));
