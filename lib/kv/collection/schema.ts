/**
 * @module
 * What a collection's schema is to it: a Standard Schema (standardschema.dev) - the interface
 * valibot's schemas implement, as do zod's and ArkType's - whose output is an object. A write runs
 * the schema's `validate` and gets the output, or its issues, which become a `ValidationError`.
 * Going through the standard rather than valibot's own API keeps a product free to bring another
 * library, and the public types free of valibot's.
 */
import { ValidationError, type ValidationIssue } from "./errors.ts";

/**
 * A schema a collection validates its items with: any Standard Schema (a valibot schema, as the
 * examples use; zod's and ArkType's are too) whose output is an object.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import type { CollectionSchema } from "shell/data";
 *
 * const Note = v.object({ text: v.string() });
 * const schema: CollectionSchema<{ text: string }, { text: string }> = Note;
 * ```
 * @see docs/data.md - Collections
 */
export interface CollectionSchema<In = unknown, Out extends object = object> {
  /** The Standard Schema interface. */
  readonly "~standard": {
    /** The standard's version. */
    readonly version: 1;
    /** The library's name (`"valibot"`). */
    readonly vendor: string;
    /** Checks a value: its output, or its issues. */
    readonly validate: (
      value: unknown,
    ) => SchemaResult<Out> | Promise<SchemaResult<Out>>;
    /** The input and output types, for inference only. */
    readonly types?: { readonly input: In; readonly output: Out } | undefined;
  };
}

/**
 * What a schema's `validate` answers: the output, or the issues.
 *
 * @example
 * ```ts
 * import type { SchemaResult } from "shell/data";
 *
 * const ok: SchemaResult<{ text: string }> = { value: { text: "hi" } };
 * const refused: SchemaResult<{ text: string }> = {
 *   issues: [{ message: "Too short.", path: ["text"] }],
 * };
 * ```
 * @see docs/data.md - Field errors
 */
export type SchemaResult<Out> =
  | { readonly value: Out; readonly issues?: undefined }
  | { readonly issues: readonly ValidationIssue[] };

/**
 * The items a schema makes: its output type.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import type { OutputOf } from "shell/data";
 *
 * const Note = v.object({ text: v.pipe(v.string(), v.trim()) });
 * type Note = OutputOf<typeof Note>; // { text: string }
 * ```
 * @see docs/data.md - Collections
 */
// deno-lint-ignore no-explicit-any -- any input: only the output is asked for
export type OutputOf<S extends CollectionSchema<any>> = NonNullable<
  S["~standard"]["types"]
>["output"];

/**
 * What a schema takes: its input type (what `create` accepts).
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import type { InputOf } from "shell/data";
 *
 * const Note = v.object({ pinned: v.optional(v.boolean(), false) });
 * type NewNote = InputOf<typeof Note>; // { pinned?: boolean }
 * ```
 * @see docs/data.md - Collections
 */
// deno-lint-ignore no-explicit-any -- any output: only the input is asked for
export type InputOf<S extends CollectionSchema<any>> = NonNullable<
  S["~standard"]["types"]
>["input"];

/** `input` as the schema makes it, or a {@link ValidationError} with its issues. */
export async function validate(
  name: string,
  schema: CollectionSchema,
  input: unknown,
): Promise<object> {
  const result = await schema["~standard"].validate(input);
  if (result.issues) throw new ValidationError(name, result.issues);
  return result.value;
}
