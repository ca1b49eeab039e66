/**
 * @module
 * The board's shapes, shared by the server and the island: types and constants only, so the
 * island's bundle takes nothing from the server's modules.
 */
import type { Entity } from "shell/runtime";

/** A task's states, in the board's column order. */
export const STATES = ["todo", "doing", "done"] as const;
export type TaskState = typeof STATES[number];

/** Each state's name on its column and its button. */
export const LABELS: Record<TaskState, string> = { todo: "Todo", doing: "Doing", done: "Done" };

export interface Task {
  title: string;
  state: TaskState;
}

/** How many tasks the board shows (the first added). */
export const SHOWN = 200;

/** The add form's state: the task it added, or what was wrong and what was typed. */
export interface AddState {
  added?: Entity<Task>;
  errors?: { title?: string[] };
  title?: string;
  /** A refusal (the task was not added): what to say. */
  refused?: string;
}

/** A task's move: the task as it now is, or why it could not move (it was deleted meanwhile). */
export interface MoveState {
  moved?: Entity<Task>;
  refused?: string;
}

/** A deletion confirmed in the island: the commit that deleted the task (none: it was gone). */
export interface RemoveState {
  removed?: { id: string; versionstamp: string | null };
  refused?: string;
}
