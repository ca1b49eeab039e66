import { useActionState, useEffect, useRef, useState } from "react";
import {
  actionStatus,
  type Change,
  type Entity,
  recover,
  type Snapshot,
  useLiveCollection,
} from "shell/runtime";
import { addTask, moveTask, removeTask } from "@/routes/board/_tasks/actions.ts";
import {
  type AddState,
  LABELS,
  type MoveState,
  type RemoveState,
  SHOWN,
  STATES,
  type Task,
} from "@/routes/board/_tasks/types.ts";

type Apply = (change: Omit<Change<Task>, "seq">) => void;

/** A refusal (a task deleted meanwhile: 404, a state that is none: 422) is said, not a failure. */
function sayRefusal<S>(error: unknown): (S & { refused: string }) | undefined {
  const status = actionStatus(error);
  if (status === undefined || status >= 500) return undefined;
  return { refused: (error as Error).message } as S & { refused: string };
}
const addOrSay = recover<AddState, [FormData]>(addTask, sayRefusal);
const moveOrSay = recover<MoveState, [FormData]>(moveTask, sayRefusal);
const removeOrSay = recover<RemoveState, [FormData]>(removeTask, sayRefusal);

/**
 * The team's task board: the tasks in a column per state, live from the server-rendered snapshot
 * (`useLiveCollection`: added, moved and deleted elsewhere, they change here as it happens). Each
 * form is a server action, so with JavaScript off every one of them still works: the add form
 * shows its errors, a move lands back on the board, and "Delete" opens a confirmation page
 * instead of the dialog.
 */
export default function Board({ snapshot }: { snapshot: Snapshot<Task> }) {
  const { items, status, apply } = useLiveCollection<Task>("/board/events", snapshot);
  const [confirming, setConfirming] = useState<Entity<Task> | null>(null);
  return (
    <>
      <AddTask apply={apply} />
      <p className="board-status" aria-live="polite">
        {status === "live" ? "Live" : status === "paused" ? "Paused" : "Connecting…"}
        {snapshot.items.length >= SHOWN && ` · the first ${SHOWN} tasks`}
      </p>
      <div className="board">
        {STATES.map((state) => (
          <section key={state} aria-labelledby={`column-${state}`} className="column">
            <h2 id={`column-${state}`}>{LABELS[state]}</h2>
            <ul>
              {items.filter((task) =>
                task.value.state === state
              ).map((task) => (
                <TaskCard key={task.id} task={task} apply={apply} confirm={setConfirming} />
              ))}
            </ul>
          </section>
        ))}
      </div>
      {items.length === 0 && <p>No tasks yet: add the first.</p>}
      <ConfirmDelete task={confirming} close={() => setConfirming(null)} apply={apply} />
    </>
  );
}

function AddTask({ apply }: { apply: Apply }) {
  const [state, add, pending] = useActionState(addOrSay, {});
  useEffect(() => {
    if (state.added) apply({ op: "create", ...state.added });
  }, [state.added]);
  const error = state.errors?.title?.[0];
  return (
    <form action={add} className="card add-task">
      <label htmlFor="task-title">Title</label>
      <input
        id="task-title"
        name="title"
        autoComplete="off"
        defaultValue={state.title}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? "task-title-error" : undefined}
      />
      <button type="submit" disabled={pending}>{pending ? "Adding…" : "Add"}</button>
      {error && <p id="task-title-error" className="field-error">{error}</p>}
      {state.refused && <p role="alert">{state.refused}</p>}
    </form>
  );
}

function TaskCard(
  { task, apply, confirm }: { task: Entity<Task>; apply: Apply; confirm(task: Entity<Task>): void },
) {
  const [state, move, pending] = useActionState(moveOrSay, {});
  useEffect(() => {
    if (state.moved) apply({ op: "update", ...state.moved });
  }, [state.moved]);
  const { title } = task.value;
  return (
    <li className="task card">
      <p className="task-title">{title}</p>
      <p className="task-state">{LABELS[task.value.state]}</p>
      <form action={move}>
        <input type="hidden" name="id" value={task.id} />
        <div role="group" aria-label={`Move “${title}”`}>
          {STATES.map((to) => (
            <button
              key={to}
              type="submit"
              name="state"
              value={to}
              aria-pressed={task.value.state === to}
              disabled={pending}
            >
              {LABELS[to]}
            </button>
          ))}
        </div>
      </form>
      {/* Without JavaScript: the confirmation page. With it: the dialog, on this page. */}
      <form
        method="get"
        action="/board/delete"
        onSubmit={(event) => {
          event.preventDefault();
          confirm(task);
        }}
      >
        <input type="hidden" name="task" value={task.id} />
        <button type="submit">Delete</button>
      </form>
      {state.refused && <p role="alert">{state.refused}</p>}
    </li>
  );
}

function ConfirmDelete(
  { task, close, apply }: { task: Entity<Task> | null; close(): void; apply: Apply },
) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [state, remove, pending] = useActionState(removeOrSay, {});
  useEffect(() => {
    if (task && !dialog.current?.open) dialog.current?.showModal();
    if (!task) dialog.current?.close();
  }, [task]);
  useEffect(() => {
    const removed = state.removed;
    if (!removed) return;
    if (removed.versionstamp) {
      apply({ op: "delete", ...removed, versionstamp: removed.versionstamp });
    }
    close();
  }, [state.removed]);
  return (
    <dialog ref={dialog} onClose={close} aria-labelledby="confirm-delete" className="card">
      <form action={remove}>
        <h2 id="confirm-delete">Delete “{task?.value.title}”?</h2>
        <p>The task goes for everyone, and cannot be brought back.</p>
        <input type="hidden" name="id" value={task?.id ?? ""} />
        <button type="submit" disabled={pending}>Yes, delete</button>{" "}
        <button type="button" onClick={close}>Cancel</button>
        {state.refused && <p role="alert">{state.refused}</p>}
      </form>
    </dialog>
  );
}
