/**
 * @module
 * What a server action was sent, checked before its body reads it. An action's arguments are what
 * the client sent, not what its type says: a call made by hand with a string where the action
 * takes a `FormData` reached `form.get(...)` with no form there, and the `TypeError` was a failure
 * (a 500, a failure line, a Sentry event) per request. `formOf` makes that the product's 400 (code
 * `not_a_form`), and `parseForm` checks the form's fields with a schema (valibot's, or any Standard
 * Schema): its typed output, or the messages by field, as `ValidationError`'s, for the action to
 * return as its state.
 */
import { httpError } from "../shared/http_error.ts";
import { messagesOf } from "../kv/collection/errors.ts";
import type { CollectionSchema, OutputOf } from "../kv/collection/schema.ts";

/**
 * The form an action was given; anything else (a call made by hand) throws the product's 400, with
 * code `not_a_form`: an expected error, never a failure line or a Sentry event, and the action's
 * body does not go on.
 *
 * @param value The action's argument that a form posts (`FormData` by its type, anything by right).
 * @throws {HttpError} 400, code `not_a_form`, when `value` is not a `FormData`.
 *
 * @example
 * ```ts
 * // routes/_notes/actions.ts
 * "use server";
 * import { formOf } from "shell";
 *
 * export async function pin(form: FormData): Promise<string> {
 *   const id = formOf(form).get("id"); // a string sent by hand: 400, not a TypeError
 *   return await Promise.resolve(typeof id === "string" ? id : "");
 * }
 * ```
 * @see docs/actions.md - Limits
 */
export function formOf(value: unknown): FormData {
  if (value instanceof FormData) return value;
  throw httpError(400, "Expected a form", { code: "not_a_form" });
}

/**
 * What `parseForm` found: the schema's output, or the messages for the user - by field path
 * (`fields`, as `ValidationError.fields`) and those about no one field (`form`).
 *
 * @example
 * ```ts
 * import type { ParsedForm } from "shell/data";
 *
 * const say = (parsed: ParsedForm<{ title: string }>) =>
 *   parsed.ok ? `Added ${parsed.output.title}` : parsed.fields.title?.[0] ?? parsed.form[0];
 * ```
 * @see docs/actions.md - Limits
 */
export type ParsedForm<Out> =
  | { ok: true; output: Out }
  | { ok: false; fields: Record<string, string[]>; form: string[] };

/**
 * A form's fields checked by `schema`: its typed output, or the messages by field to return as the
 * action's state. The fields are the form's entries as an object: a name sent once is its value (a
 * string, or a `File`), a name sent more than once the list of them. Anything but a `FormData` is
 * the product's 400 (`formOf`).
 *
 * @param schema A valibot schema of an object (or any Standard Schema).
 * @param value The action's form argument.
 * @throws {HttpError} 400, code `not_a_form`, when `value` is not a `FormData`.
 *
 * @example
 * ```ts
 * // routes/_board/actions.ts
 * "use server";
 * import * as v from "valibot";
 * import { parseForm } from "shell/data";
 *
 * const Task = v.object({
 *   title: v.pipe(v.string(), v.trim(), v.minLength(1, "Give the task a title.")),
 * });
 * export type TaskState = { errors?: Record<string, string[]>; added?: string };
 *
 * export async function addTask(_previous: TaskState, form: FormData): Promise<TaskState> {
 *   const parsed = await parseForm(Task, form);
 *   if (!parsed.ok) return { errors: parsed.fields }; // shown beside the field
 *   return { added: parsed.output.title }; // typed: { title: string }
 * }
 * ```
 * @see docs/actions.md - Limits
 */
// deno-lint-ignore no-explicit-any -- any input: a form's fields are the schema's to check
export async function parseForm<S extends CollectionSchema<any>>(
  schema: S,
  value: unknown,
): Promise<ParsedForm<OutputOf<S>>> {
  const result = await schema["~standard"].validate(fieldsOf(formOf(value)));
  if (!result.issues) return { ok: true, output: result.value as OutputOf<S> };
  return { ok: false, ...messagesOf(result.issues) };
}

/**
 * The form's entries as an object (own properties: a field named `__proto__` is a field), a name
 * sent more than once the list of its values. One pass: `getAll` per name walks every entry, and
 * the 10,000 names a client may send took some 300 ms.
 */
function fieldsOf(form: FormData): Record<string, FormDataEntryValue | FormDataEntryValue[]> {
  const byName = new Map<string, FormDataEntryValue[]>();
  for (const [name, value] of form) {
    const values = byName.get(name);
    if (values) values.push(value);
    else byName.set(name, [value]);
  }
  return Object.fromEntries(
    [...byName].map(([name, values]) => [name, values.length === 1 ? values[0] : values]),
  );
}
