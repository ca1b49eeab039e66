"use server";
/**
 * @module
 * The board's server actions: add a task, move it, delete it. The forms reach them with or without
 * JavaScript, behind `routes/board/_middleware.ts` (a signed-in user). A title the schema refuses
 * comes back as a field error for the form to show; a task deleted meanwhile is refused (404)
 * through the product-errors path — the island says so in the task, a form posted without
 * JavaScript lands on the error page.
 */
import { formOf, redirect, requestContext } from "shell";
import { kvOf, ValidationError } from "shell/data";
import { tasks } from "./tasks.ts";
import type { AddState, MoveState, RemoveState, TaskState } from "./types.ts";

/** Adds a task, in Todo. */
export async function addTask(_previous: AddState, form: FormData): Promise<AddState> {
  const title = field(form, "title");
  try {
    return { added: await tasks.create(kvOf(requestContext()), { title, state: "todo" }) };
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
  const moved = await tasks.update(kvOf(requestContext()), field(form, "id"), { state });
  return { moved };
}

/** Deletes a task, from the island's confirmation. */
export async function removeTask(_previous: RemoveState, form: FormData): Promise<RemoveState> {
  const id = field(form, "id");
  return { removed: { id, versionstamp: await tasks.delete(kvOf(requestContext()), id) } };
}

/** Deletes a task, from the confirmation page (JavaScript off), and goes back to the board. */
export async function confirmDelete(form: FormData): Promise<never> {
  await tasks.delete(kvOf(requestContext()), field(form, "id"));
  redirect("/board");
}

/** A text field of the form (a file, or nothing, is empty); no form at all (a call by hand): 400. */
function field(form: unknown, name: string): string {
  const value = formOf(form).get(name);
  return typeof value === "string" ? value : "";
}
