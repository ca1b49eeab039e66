/**
 * @module
 * The board's tasks: a collection (`shell/data`) under `["tasks"]` — each task validated by the
 * schema on every write, listed in the order tasks were added, every add, move and delete a
 * change that open boards receive (`routes/board/events.ts`).
 */
import * as v from "valibot";
import { type Collection, collection } from "shell/data";
import { STATES, type Task } from "./types.ts";

// 120 characters also keeps a task far below KV's 64 KiB a value: too long is a field error.
const TaskSchema = v.object({
  title: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, "Give the task a title."),
    v.maxLength(120, "120 characters at most."),
  ),
  state: v.picklist(STATES, "A task is todo, doing or done."),
});

/** Typed as the island's `Task`: a schema that stops matching it fails `deno check` here. */
export const tasks: Collection<Task> = collection("tasks", { schema: TaskSchema });
