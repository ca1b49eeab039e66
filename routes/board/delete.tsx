import { defineRoute, notFound } from "shell";
import { kvOf } from "shell/data";
import type { Entity } from "shell/runtime";
import type { Task } from "./_tasks/types.ts";
import { confirmDelete } from "./_tasks/actions.ts";
import { tasks } from "./_tasks/tasks.ts";

const route = defineRoute("board/delete.tsx");

/** `/board/delete?task=…`: the confirmation a board asks for without JavaScript. */
export const handler = route.handlers<{ task: Entity<Task> }>({
  async GET(_req, ctx) {
    const task = await tasks.get(kvOf(ctx), ctx.url.searchParams.get("task") ?? "");
    if (!task) throw notFound("This task does not exist any more.");
    return ctx.render({ task });
  },
});

export default route.page<typeof handler>(({ data: { task } }) => (
  <>
    <title>Delete a task</title>
    <h1>Delete “{task.value.title}”?</h1>
    <p>The task goes for everyone, and cannot be brought back.</p>
    <form action={confirmDelete}>
      <input type="hidden" name="id" value={task.id} />
      <button type="submit">Yes, delete</button> <a href="/board">Cancel</a>
    </form>
  </>
));
