"use server";
/**
 * @module
 * The board's server actions: add a task, move it, delete it. The forms reach them with or without
 * JavaScript, behind `routes/board/_middleware.ts` (a signed-in user). Each change and its entry in
 * the board's activity are one commit (`commitAll`): both, or neither. A title the schema refuses
 * comes back as a field error for the form to show; a task deleted meanwhile is refused (404)
 * through the product-errors path — the island says so in the task, a form posted without
 * JavaScript lands on the error page.
 */
import { formOf, redirect, requestContext } from "shell";
import { userOf } from "shell/auth";
import { commitAll, ConflictError, type CreateOptions, kvOf, ValidationError } from "shell/data";
import { httpError } from "shell/runtime";
import { define } from "../../_define.ts";
import { type Activity, recording } from "./activity.ts";
import { tasks } from "./tasks.ts";
import type { AddState, MoveState, RemoveState, TaskState } from "./types.ts";

/** How often a delete reads its task again, when other users keep moving it meanwhile. */
const DELETE_TRIES = 3;

/** The activity's writes for a change to a task by the signed-in user (`recording`). */
function logged(
  kv: Deno.Kv,
  task: string,
  title: string,
  did: Activity["did"],
  options?: CreateOptions,
) {
  // The name the app addresses them by, never the email: every signed-in user reads the board.
  const by = userOf(define.context().var).name;
  return recording(kv, { task, title, did, by, at: Date.now() }, options);
}

/** Adds a task, in Todo. */
export async function addTask(_previous: AddState, form: FormData): Promise<AddState> {
  const title = field(form, "title");
  try {
    const kv = kvOf(requestContext());
    const task = tasks.creating({ title, state: "todo" });
    // The title as typed: too long or blank, the task's schema refuses the commit first.
    const [added] = await commitAll(kv, [
      task,
      ...await logged(kv, task.id, title.trim(), "added"),
    ]);
    return { added };
  } catch (error) {
    // What the user typed, back into the form: never more than the state's cookie can carry.
    if (error instanceof ValidationError) {
      return { errors: error.fields, title: title.slice(0, 500) };
    }
    throw error;
  }
}

/** Moves a task to the state of the button pressed (`state`). */
export async function moveTask(_previous: MoveState, form: FormData): Promise<MoveState> {
  // Any string: the collection's schema refuses what is not a state (422).
  const state = field(form, "state") as TaskState;
  const kv = kvOf(requestContext());
  const task = await tasks.get(kv, field(form, "id"));
  if (!task) throw httpError(404, "This task does not exist any more.");
  // A task's title never changes: the entry may take it from the task as read.
  const [moved] = await commitAll(kv, [
    tasks.updating(task.id, { state }),
    ...await logged(kv, task.id, task.value.title, state),
  ]);
  return { moved };
}

/** Deletes a task, from the island's confirmation. */
export async function removeTask(_previous: RemoveState, form: FormData): Promise<RemoveState> {
  const id = field(form, "id");
  return { removed: { id, versionstamp: await deleteTask(id) } };
}

/** Deletes a task, from the confirmation page (JavaScript off), and goes back to the board. */
export async function confirmDelete(form: FormData): Promise<never> {
  await deleteTask(field(form, "id"));
  redirect("/board");
}

/**
 * Deletes the task with its activity entry: the commit's versionstamp, `null` when it was gone.
 * The user asked for it gone, whatever its state: a task another user moved meanwhile is read
 * again and deleted. The entry holds only with the task as read, so a task another user deleted
 * meanwhile gets one entry, theirs.
 */
async function deleteTask(id: string): Promise<string | null> {
  const kv = kvOf(requestContext());
  for (let tries = 1;; tries++) {
    const task = await tasks.get(kv, id);
    if (!task) return null;
    try {
      const [deleted] = await commitAll(kv, [
        tasks.deleting(id),
        ...await logged(kv, id, task.value.title, "deleted", { checks: [tasks.check(task)] }),
      ]);
      return deleted;
    } catch (error) {
      const changed = error instanceof ConflictError && error.reason === "checked";
      if (!changed || tries === DELETE_TRIES) throw error;
    }
  }
}

/** A text field of the form (a file, or nothing, is empty); no form at all (a call by hand): 400. */
function field(form: unknown, name: string): string {
  const value = formOf(form).get(name);
  return typeof value === "string" ? value : "";
}
