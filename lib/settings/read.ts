/**
 * @module
 * Reads settings from environment variables by their schemas - the framework's and the product's,
 * with the same rules - gathering every problem rather than stopping at the first, so one start-up
 * message names them all. An empty variable counts as unset. A secret's value never appears in a
 * problem: it names the variable only.
 */
/** Reads one environment variable: `Deno.env.get`, or a test's record. */
export type Env = (name: string) => string | undefined;

/**
 * What one setting's variable becomes: a schema taking its text, or `undefined` when it is unset or
 * empty, to a value. Any synchronous Standard Schema (standardschema.dev): a valibot schema, as
 * the framework's own settings are, or zod's, or ArkType's. One that does not take `undefined`
 * (valibot: no `v.optional`) makes the setting required.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import type { SettingSchema } from "shell";
 *
 * const pageSize: SettingSchema<number> = v.optional(v.pipe(v.string(), v.transform(Number)), "20");
 * ```
 * @see docs/settings.md - Your product's settings
 */
export interface SettingSchema<Out = unknown> {
  /** The Standard Schema interface. */
  readonly "~standard": {
    /** The standard's version. */
    readonly version: 1;
    /** The library's name (`"valibot"`). */
    readonly vendor: string;
    /** Checks a value: its output, or its issues (synchronously, for settings). */
    readonly validate: (value: unknown) => unknown;
    /** The input and output types, for inference only: text in. */
    readonly types?: { readonly input: string | undefined; readonly output: Out } | undefined;
  };
}

/**
 * Settings that make no sense, each named with what it should be: thrown before anything
 * listens. `problems` holds one line per variable.
 *
 * @example
 * ```ts
 * import { SettingsError } from "shell/server";
 *
 * const error = new SettingsError(["PAGE_SIZE=lots: expected a number of rows"]);
 * console.error(error.message); // Invalid settings:\n  PAGE_SIZE=lots: expected a number of rows
 * ```
 * @see docs/settings.md
 */
export class SettingsError extends Error {
  /** Each problem, one line each. */
  readonly problems: string[];
  /** An error naming each of `problems`, one line per variable that makes no sense. */
  constructor(problems: string[]) {
    super(`Invalid settings:\n${problems.map((problem) => `  ${problem}`).join("\n")}`);
    this.name = "SettingsError";
    this.problems = problems;
  }
}

const secrets = new WeakSet<object>();

/**
 * Marks a setting as a secret (an API key, a password, a token): a value that makes no sense is
 * reported by the variable's name alone, never with the value or any part of it.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { defineSettings, secret } from "shell";
 *
 * export default defineSettings({
 *   PAYMENTS_API_KEY: secret(v.pipe(v.string(), v.regex(/^sk_\w{24,}$/, "expected sk_..."))),
 * });
 * ```
 * @see docs/settings.md - Secrets
 */
export function secret<T extends SettingSchema>(schema: T): T {
  secrets.add(schema);
  return schema;
}

/** Whether `schema` is a secret, or wraps one (`v.optional(secret(...))`). */
export function isSecret(schema: object): boolean {
  if (secrets.has(schema)) return true;
  const wrapped = (schema as { wrapped?: unknown }).wrapped;
  return typeof wrapped === "object" && wrapped !== null && isSecret(wrapped);
}

/** The records of values `readVariables` made: read from text by their schemas, checked already. */
const read = new WeakSet<object>();

/** Whether `values` are what `readVariables` read (an entry point's, from the environment). */
export function wasRead(values: object): boolean {
  return read.has(values);
}

/**
 * Each variable of `schemas` read from `env` and parsed by its schema: the values by name (a
 * setting unset and not required is there, as what its schema made of `undefined`). Each variable
 * that makes no sense adds a line to `problems`.
 */
export function readVariables(
  schemas: Readonly<Record<string, SettingSchema>>,
  env: Env,
  problems: string[],
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  read.add(values);
  for (const [name, schema] of Object.entries(schemas)) {
    const text = env(name) || undefined;
    const result = resultOf(schema, text);
    if (result instanceof Promise) {
      result.catch(() => {}); // its outcome is no one's: the setting is refused either way
      problems.push(`${name}: its schema is asynchronous; a setting's must check at once`);
    } else if (result.issues?.length) {
      problems.push(problemOf(name, text, schema, result.issues[0]));
    } else values[name] = result.value;
  }
  return values;
}

/**
 * `schema`'s result for `input`. One that throws (`v.transform(JSON.parse)` of text that is no
 * JSON) is an issue, not the start's crash: the error's message quotes the text - a secret's, a
 * start's output and logs - so a secret's says only what was thrown.
 */
export function resultOf(
  schema: SettingSchema,
  input: unknown,
): StandardResult | Promise<unknown> {
  try {
    return schema["~standard"].validate(input) as StandardResult | Promise<unknown>;
  } catch (error) {
    const thrown = error instanceof Error ? error : new Error(String(error));
    const message = isSecret(schema)
      ? `its schema threw a ${thrown.name}`
      : `its schema threw ${thrown.name}: ${thrown.message}`;
    return { issues: [{ message }] };
  }
}

/** A Standard Schema's result; valibot's issues say what they expected and received, too. */
export interface StandardResult {
  value?: unknown;
  issues?: readonly Issue[];
}

export interface Issue {
  message: string;
  expected?: string | null;
  received?: string;
  input?: unknown;
}

/** The problem line of the setting `name` whose text `text` its schema refused with `issue`. */
export function problemOf(
  name: string,
  text: string | undefined,
  schema: object,
  issue: Issue,
): string {
  if (text === undefined) return `${name}: required, and not set`;
  if (!isSecret(schema)) return `${name}=${text}: ${issue.message}`;
  // valibot's own messages quote what they received: the value, or a part of it after a
  // transform (`v.trim()`, `v.startsWith()`). Such a message gives way to what was expected.
  const seen = [text, issue.received ?? "", typeof issue.input === "string" ? issue.input : ""]
    .filter((part) => part.length > 0 && part !== '""');
  const leaks = seen.some((part) => issue.message.includes(part));
  const message = !leaks
    ? issue.message
    : issue.expected
    ? `expected ${issue.expected}`
    : "invalid";
  return `${name} (a secret, its value not shown): ${message}`;
}
