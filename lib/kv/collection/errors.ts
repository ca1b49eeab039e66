/**
 * @module
 * What a collection's writes refuse, as expected product errors (`HttpError`s: their status, no
 * digest, no Sentry event): an item its schema or KV's limits refuse (422, with the schema's issues
 * field by field, for a form to show), a conflict (409: the item changed since it was read, or a
 * unique index value is taken), and a transition its state machine does not allow (409). Uncaught,
 * each answers its request through the product-errors path (`_error.tsx`, JSON, `ActionError`).
 */
import { HttpError } from "../../shared/http_error.ts";

/**
 * One thing a schema refused, as Standard Schema reports it (valibot's issues are such): the
 * message, and the path to the field it is about.
 *
 * @example
 * ```ts
 * import type { ValidationIssue } from "shell/data";
 *
 * const issue: ValidationIssue = { message: "Give the task a title.", path: ["title"] };
 * ```
 * @see docs/data.md - Field errors
 */
export interface ValidationIssue {
  /** For the user. */
  readonly message: string;
  /** The field: its keys from the item down (`["address", "city"]`); none for the whole item. */
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/**
 * A schema's issues as a form shows them: the messages by field path (`"title"`,
 * `"address.city"`), and those that belong to no one field.
 */
export function messagesOf(
  issues: readonly ValidationIssue[],
): { fields: Record<string, string[]>; form: string[] } {
  const fields: Record<string, string[]> = {};
  const form: string[] = [];
  for (const issue of issues) {
    const path = issue.path?.map((part) => typeof part === "object" ? part.key : part);
    const named = path?.length && path.every((k) => typeof k !== "symbol");
    if (named) (fields[path.join(".")] ??= []).push(issue.message);
    else form.push(issue.message);
  }
  return { fields, form };
}

/**
 * A write the collection's schema refused, or one too large for Deno KV: 422. `fields` holds the
 * messages by field path (the issues flattened, as `useActionState` state shows them beside the
 * inputs), `form` the ones that belong to no field. Uncaught it answers 422 with the first message,
 * and the code `"invalid"`.
 *
 * @example
 * ```ts
 * // routes/_notes/actions.ts
 * "use server";
 * import * as v from "valibot";
 * import { requestContext } from "shell";
 * import { collection, kvOf, ValidationError } from "shell/data";
 *
 * const notes = collection("notes", {
 *   schema: v.object({ text: v.pipe(v.string(), v.minLength(1, "Write something.")) }),
 * });
 *
 * export type NoteState = { errors?: Record<string, string[]> };
 *
 * export async function addNote(_previous: NoteState, form: FormData): Promise<NoteState> {
 *   try {
 *     await notes.create(kvOf(requestContext()), { text: String(form.get("text") ?? "") });
 *     return {};
 *   } catch (error) {
 *     if (error instanceof ValidationError) return { errors: error.fields }; // shown by the form
 *     throw error; // anything else: not the user's to fix
 *   }
 * }
 * ```
 * @see docs/data.md - Field errors
 */
export class ValidationError extends HttpError {
  /** The schema's issues, as it reported them (none for a value too large). */
  readonly issues: readonly ValidationIssue[];
  /** Messages by field path (`"title"`, `"address.city"`). */
  readonly fields: Record<string, string[]>;
  /** Messages that belong to no one field: the item as a whole, or its size. */
  readonly form: string[];

  /**
   * The error for `issues`, or (with none) for the messages in `form`.
   *
   * @param collection The collection's name, for the developer.
   * @param issues valibot's issues.
   * @param form Messages for the whole item, when there are no issues.
   * @param cause What led to it (a `KvLimitError`).
   */
  constructor(
    readonly collection: string,
    issues: readonly ValidationIssue[],
    form: string[] = [],
    cause?: unknown,
  ) {
    const { fields, form: whole } = messagesOf(issues);
    whole.push(...form);
    const [field, [first] = []] = Object.entries(fields)[0] ?? [];
    super(422, whole[0] ?? (field ? `${field}: ${first}` : "Invalid"), { cause, code: "invalid" });
    this.name = "ValidationError";
    this.issues = issues;
    this.fields = fields;
    this.form = whole;
  }
}

/**
 * A write that lost to another, or that would take a unique index value another item has: 409.
 * `reason` says which, and is its `code` too: `"changed"` (the item changed, or was deleted, since
 * the versionstamp the write was given), `"taken"` (`index` names the unique index), and for the
 * other collections' items the write holds only with (`checks`): `"checked"` (one changed since it
 * was read; `checked` names its collection) or `"exists"` (an item has the value a `checkAbsent`
 * asked to be free; `checked` and `index` name them). The message names the same, never an id or
 * a value.
 *
 * @example
 * ```ts
 * import { ConflictError } from "shell/data";
 *
 * function explain(error: unknown): string | undefined {
 *   if (!(error instanceof ConflictError)) return undefined;
 *   if (error.reason === "exists" && error.checked === "loans") return "It is on loan now.";
 *   return error.reason === "taken" ? "That name is taken." : "Someone changed it meanwhile.";
 * }
 * ```
 * @see docs/data.md - Conflicts
 */
export class ConflictError extends HttpError {
  /**
   * The error for a write to `collection` that conflicted.
   *
   * @param collection The collection's name.
   * @param reason `"changed"`, `"taken"`, `"checked"` or `"exists"`.
   * @param index The unique index whose value is taken (`"taken"`, `"exists"`).
   * @param checked The collection whose check failed (`"checked"`, `"exists"`), when a collection
   * made the check.
   */
  constructor(
    readonly collection: string,
    readonly reason: "changed" | "taken" | "checked" | "exists",
    readonly index?: string,
    readonly checked?: string,
  ) {
    super(409, conflictMessage(reason, index, checked), { code: reason });
    this.name = "ConflictError";
  }
}

function conflictMessage(reason: ConflictError["reason"], index?: string, checked?: string) {
  const retry = "(elsewhere, or in another tab): reload and try again.";
  switch (reason) {
    case "taken":
      return `Another item has this ${index} already.`;
    case "changed":
      return `This was changed meanwhile ${retry}`;
    case "checked":
      return checked === undefined
        ? `Something this depends on was changed meanwhile ${retry}`
        : `The ${checked} item this depends on was changed meanwhile ${retry}`;
    case "exists":
      return checked === undefined
        ? "This conflicts with something that exists now: reload and try again."
        : `A ${checked} item with this ${index} exists now: reload and try again.`;
  }
}

/**
 * An update that moves a field along a transition its collection's state machine does not allow
 * (`transitions`): 409, as the item's current state is what refuses it; its `code` is
 * `"transition"`.
 *
 * @example
 * ```ts
 * import { TransitionError } from "shell/data";
 *
 * const error = new TransitionError("tasks", "state", "todo", "done");
 * console.log(error.status, error.message); // 409 Cannot go from todo to done.
 * ```
 * @see docs/data.md - States and transitions
 */
export class TransitionError extends HttpError {
  /**
   * The error for `field` going from `from` to `to`.
   *
   * @param collection The collection's name.
   * @param field The field whose state machine refused.
   * @param from Its value now.
   * @param to The value the update asked for.
   */
  constructor(
    readonly collection: string,
    readonly field: string,
    readonly from: unknown,
    readonly to: unknown,
  ) {
    super(409, `Cannot go from ${String(from)} to ${String(to)}.`, { code: "transition" });
    this.name = "TransitionError";
  }
}
